#!/usr/bin/env python3
"""Compiles the Triton kernels of kernels.py to sm_80 PTX, with no GPU, and writes beside this
script, for each compiled kernel:

  <name>.ptx   the PTX exactly as Triton emits it (no line information);
  <name>.json  how Triton's own launcher would launch it: entry name, block size (32 * num_warps),
               dynamic shared bytes, scratch sizes, the parameter list as launched (the kernel's
               non-constexpr arguments, then the two hidden scratch pointers), the constexpr
               values, the alignment assumptions the PTX was specialised on, and the triton
               version.

Triton is pinned: the PTX depends on the compiler version, so this script refuses any other.

  python3 -m venv .venv
  .venv/bin/pip install triton==3.9.0 numpy
  .venv/bin/python generate.py            # regenerate every kernel
  .venv/bin/python generate.py --ptxas /usr/local/cuda/bin/ptxas   # and check each with ptxas

Running it twice gives byte-identical files.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TRITON_VERSION = "3.9.0"  # the only version this script runs with
HERE = Path(__file__).resolve().parent

# Before triton is imported: no .loc/.file lines (they would carry this machine's paths), a
# private cache (so nothing compiled elsewhere with other settings is reused), and Triton's
# default of fusing a * b + c into fma stated explicitly.
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
CACHE_DIR = tempfile.mkdtemp(prefix="triton-cache-")
os.environ["TRITON_CACHE_DIR"] = CACHE_DIR
os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"

import triton  # noqa: E402

if triton.__version__ != TRITON_VERSION:
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    sys.exit(f"{Path(__file__).name}: triton {triton.__version__} is installed; the committed "
             f"PTX comes from exactly {TRITON_VERSION} (pip install triton=={TRITON_VERSION})")

from triton.backends.compiler import GPUTarget  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ beside kernels.py
sys.path.insert(0, str(HERE))
import kernels  # noqa: E402

# Pointers are assumed 16-byte aligned, as Triton's launcher specialises them for aligned
# tensors (hal allocations are 256-byte aligned). Integer arguments listed in `aligned` are
# assumed to be multiples of 16; the launch must honour that.
MATMUL = dict(constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4},
              grid="(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), 1, 1)", num_warps=4, num_stages=3)
ATTENTION = dict(constexprs={"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64},
                 grid="(cdiv(seq_len, BLOCK_M), heads, 1)", aligned=["stride_h", "stride_s"],
                 signature={"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16",
                            "o_ptr": "*fp32", "scale": "fp32", "seq_len": "i32",
                            "stride_h": "i32", "stride_s": "i32"},
                 num_warps=4, num_stages=3)
KERNELS = [
    dict(name="vector_add", fn=kernels.vector_add, grid="(cdiv(n, BLOCK), 1, 1)",
         signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
         constexprs={"BLOCK": 256}, aligned=[], num_warps=4, num_stages=3),
    dict(name="softmax_rows", fn=kernels.softmax_rows, grid="(n_rows, 1, 1)",
         signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32",
                    "out_row_stride": "i32", "n_cols": "i32"},
         constexprs={"BLOCK": 128}, aligned=[], num_warps=4, num_stages=3),
    # N and K multiples of 16 let every tile load be a 16-byte cp.async.
    dict(MATMUL, name="matmul_f16", fn=kernels.matmul_f16,
         signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                    "K": "i32", "lda": "i32", "ldb": "i32", "ldc": "i32"},
         aligned=["N", "K", "lda", "ldb", "ldc"]),
    # B is K-contiguous here, so only K needs to be a multiple of 16; N is free.
    dict(MATMUL, name="matmul_f16_bt", fn=kernels.matmul_f16_bt,
         signature={"a_ptr": "*fp16", "bt_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32",
                    "N": "i32", "K": "i32", "lda": "i32", "ldbt": "i32", "ldc": "i32"},
         aligned=["K", "lda", "ldbt", "ldc"]),
    dict(ATTENTION, name="flash_attention_fwd", fn=kernels.flash_attention_fwd),
    dict(ATTENTION, name="flash_attention_fwd_causal", fn=kernels.flash_attention_fwd_causal),
    dict(ATTENTION, name="flash_attention_fwd_2stage", fn=kernels.flash_attention_fwd_2stage,
         num_stages=2),
    dict(name="histogram_atomic", fn=kernels.histogram_atomic, grid="(cdiv(n, BLOCK), 1, 1)",
         signature={"x_ptr": "*i32", "counts_ptr": "*i32", "n": "i32", "num_bins": "i32"},
         constexprs={"BLOCK": 256}, aligned=[], num_warps=4, num_stages=3),
]

# Instruction families reported per kernel (README.md, and "instructions" in the .json): a name
# and a pattern for the opcode (the instruction's first word, after any @predicate).
FAMILIES = [
    ("mma.sync", r"mma\.sync\."),
    ("ldmatrix", r"ldmatrix\.(?!.*\.trans)"),
    ("ldmatrix.trans", r"ldmatrix\..*\.trans"),
    ("cp.async", r"cp\.async\.c[ag]\."),
    ("cp.async.commit_group", r"cp\.async\.commit_group"),
    ("cp.async.wait_group", r"cp\.async\.wait_group"),
    ("shfl.sync.bfly", r"shfl\.sync\.bfly"),
    ("bar.sync", r"(bar|barrier)\.sync"),
    ("ex2.approx", r"ex2\.approx"),
    ("atom.global", r"atom\.global"),
    ("red.global", r"red\.global"),
    ("ld.global", r"ld\.global"),
    ("st.global", r"st\.global"),
    ("ld.shared", r"ld\.shared"),
    ("st.shared", r"st\.shared"),
    ("cvt.rn.f16x2.f32", r"cvt\.rn\.f16x2\.f32"),
    ("div.full.f32", r"div\.full\.f32"),
    ("fma.rn.f32", r"fma\.rn\.f32"),
]

# The two parameters Triton appends to every kernel. Its launcher passes NULL for each whose size
# in the metadata is 0, else a pointer to that much global memory per program.
HIDDEN = [("global_scratch", "global_scratch_size"), ("profile_scratch", "profile_scratch_size")]


def compile_kernel(spec):
    fn = spec["fn"]
    signature = dict(spec["signature"])
    for name in spec["constexprs"]:
        signature[name] = "constexpr"
    # Order the signature as the function declares its arguments.
    signature = {name: signature[name] for name in fn.arg_names}
    attrs = {}
    for i, name in enumerate(fn.arg_names):
        if signature[name].startswith("*") or name in spec["aligned"]:
            attrs[(i, )] = [["tt.divisibility", 16]]
    source = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=spec["constexprs"],
                                       attrs=attrs)
    options = {"num_warps": spec["num_warps"], "num_stages": spec["num_stages"],
               "ptx_version": 80, "enable_fp_fusion": True}
    return triton.compile(source, target=GPUTarget("cuda", 80, 32), options=options)


def entry_params(ptx):
    """The declaration of each parameter of the PTX's single .entry, without its name."""
    match = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ptx, re.S)
    return [" ".join(line.split()[1:-1]) for line in match.group(1).split(",")]


def launch_params(spec, meta, ptx):
    """The parameter list as launched, checked against the PTX's own signature."""
    params = []
    for name, ty in spec["signature"].items():
        if ty.startswith("*"):
            params.append(dict(name=name, kind="pointer", type=ty, size=8,
                               assumed_alignment=16))
        else:
            size = {"i32": 4, "fp32": 4}[ty]
            param = dict(name=name, kind="value", type=ty, size=size)
            if name in spec["aligned"]:
                param["assumed_multiple_of"] = 16
            params.append(param)
    for name, size_field in HIDDEN:
        size = getattr(meta, size_field)
        params.append(dict(name=name, kind="pointer", type="u64", size=8, hidden=True,
                           launcher_passes="NULL (0)" if size == 0 else f"{size} bytes/program"))
    ptx_params = entry_params(ptx)
    assert len(ptx_params) == len(params), (spec["name"], ptx_params, params)
    for param, declaration in zip(params, ptx_params):
        assert (param["kind"] == "pointer") == (".ptr" in declaration), (param, declaration)
        param["ptx"] = declaration
    return params


def families(ptx):
    """How many instructions of each family the PTX holds."""
    opcodes = []
    for line in ptx.splitlines():
        words = line.split()
        if words and words[0].startswith("@"):
            words = words[1:]
        if words:
            opcodes.append(words[0])
    found = {}
    for name, pattern in FAMILIES:
        count = sum(1 for op in opcodes if re.match(pattern, op))
        if count:
            found[name] = count
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_80)")
    parser.add_argument("--out", default=str(HERE), help="output folder (default: this folder)")
    args = parser.parse_args()
    out = Path(args.out)
    for spec in KERNELS:
        compiled = compile_kernel(spec)
        meta = compiled.metadata
        ptx = compiled.asm["ptx"]
        assert meta.name == spec["name"], (meta.name, spec["name"])
        assert ".loc" not in ptx and ".file" not in ptx, "line information in the PTX"
        for path in (HERE, Path.home(), Path(triton.__file__).parent, sys.prefix,
                     tempfile.gettempdir()):
            assert str(path) not in ptx, f"{path} appears in the PTX"
        assert meta.num_ctas == 1
        block = 32 * meta.num_warps
        assert f".reqntid {block}" in ptx
        info = dict(
            entry=meta.name,
            grid=spec["grid"],
            triton_version=triton.__version__,
            target="sm_80",
            ptx_version="8.0",
            num_warps=meta.num_warps,
            num_stages=meta.num_stages,
            num_ctas=meta.num_ctas,
            block=[block, 1, 1],
            shared_bytes=meta.shared,
            global_scratch_size=meta.global_scratch_size,
            profile_scratch_size=meta.profile_scratch_size,
            params=launch_params(spec, meta, ptx),
            constexprs=spec["constexprs"],
            instructions=families(ptx),
        )
        (out / f"{spec['name']}.ptx").write_text(ptx)
        (out / f"{spec['name']}.json").write_text(json.dumps(info, indent=2) + "\n")
        line = (f"{spec['name']:28} block {block:3}  shared {meta.shared:6}  "
                f"ptx {len(ptx):6} bytes")
        if args.ptxas:
            result = subprocess.run(
                [args.ptxas, "-arch=sm_80", str(out / f"{spec['name']}.ptx"), "-o", os.devnull],
                capture_output=True, text=True)
            line += "  ptxas " + ("ok" if result.returncode == 0 else "FAILED")
            if result.returncode != 0:
                print(result.stderr, file=sys.stderr)
        print(line)
        print("    " + ", ".join(f"{k} x{v}" for k, v in info["instructions"].items()))


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(CACHE_DIR, ignore_errors=True)
