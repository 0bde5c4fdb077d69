"""Compiles the kernels of specs.py with PyPI `triton` (no GPU needed) and writes what Triton's
cache holds for each: <name>.json (the metadata) and <name>.ptx, for sm_80.

    pip install triton==3.9.0 numpy && python generate.py

The tests load these files with hal.triton.load, so they run where triton is not installed;
where it is, test_triton.py also compiles the same kernels itself.
"""

import json
import os

import specs

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    for name, compiled in specs.compile_all().items():
        md = compiled.metadata._asdict()
        # Keep no path of the machine that compiled it: the libraries by name only.
        md["extern_libs"] = [[lib, os.path.basename(path)] for lib, path in md["extern_libs"]]
        md["target"] = vars(md["target"])  # as Triton's cache writes it
        with open(os.path.join(HERE, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(md, f, indent=1, sort_keys=True)
            f.write("\n")
        with open(os.path.join(HERE, f"{name}.ptx"), "w", encoding="utf-8") as f:
            f.write(compiled.asm["ptx"])
        print(f"{name}: {md['num_warps']} warps, {md['shared']} shared bytes")


if __name__ == "__main__":
    main()
