#!/usr/bin/env python3
"""Runs the code blocks of hal's documentation as a reader would, so the docs cannot drift.

usage: run_doc_blocks.py --build-dir DIR --work-dir DIR [--path DIR]... [--list] DOC.md...

Every fenced code block of each DOC must be preceded, on the line just above its fence, by a
marker saying what it is:

  <!-- doc: file NAME -->         the block is the whole text of file NAME (a program, a kernel)
  <!-- doc: run -->               shell commands, run in order with what came before
  <!-- doc: run expect="TEXT" --> the same, and their output must contain TEXT
  <!-- doc: python -->            a Python program, run by `python3` of the session (the venv's
                                  once a run block activated one); expect="TEXT" as for run
  <!-- doc: text -->              not commands: what a program prints, a synopsis, a diagram
  <!-- doc: fragment -->          part of a program, shown for reading
  <!-- doc: not run: REASON -->   a complete command that is not run here, and why

A block without a marker fails the test: a new example must be run, or say why not.

The blocks of one DOC run as one reader's session: one bash process, started in an empty
directory of its own whose `build` is a link to hal's build directory (the docs' commands run
from a checkout where `tools/dev.sh` built hal into `build`). HOME is that directory too, so a
command that installs into $HOME stays inside the test. Files are written when their block is
reached; exported variables carry from block to block; each run block starts in that directory.
A run block stops at its first failing command. Exit status: 0 when every block of every DOC ran
as written, 1 otherwise.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

MARKER = re.compile(r"^\s*<!--\s*doc:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)\s*$")
KINDS = ("file", "run", "python", "text", "fragment", "not run")


class Block:
    def __init__(self, doc, line, marker, text):
        self.doc, self.line, self.marker, self.text = doc, line, marker, text
        self.kind, self.arg = parse_marker(marker) if marker is not None else (None, None)

    def where(self):
        return f"{self.doc}:{self.line}"


def parse_marker(marker):
    for kind in KINDS:
        if marker == kind or marker.startswith(kind + " ") or marker.startswith(kind + ":"):
            rest = marker[len(kind):].lstrip(" :")
            if kind in ("run", "python") and rest:
                m = re.fullmatch(r'expect="(.*)"', rest)
                return (kind, m.group(1)) if m else ("bad", marker)
            if kind in ("file", "not run") and not rest:
                return "bad", marker
            return kind, rest
    return "bad", marker


def read_blocks(path):
    """The fenced blocks of a Markdown file, each with the marker on the line above it."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group(1), m.group(2)
        start = i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        if i == len(lines):
            raise SystemExit(f"{path}:{start + 1}: a code block is never closed")
        prev = MARKER.match(lines[start - 1]) if start > 0 else None
        blocks.append(Block(path, start + 1, prev.group(1) if prev else None,
                            "\n".join(body) + "\n"))
        i += 1
    return blocks


def session_script(blocks, work):
    """One bash script that replays a document's blocks in order."""
    # fd 4 keeps the session's stderr for the trap, which runs inside the block's redirection.
    out = ["set -o pipefail", "exec 4>&2", f"cd {shlex.quote(work)}"]
    for n, b in enumerate(blocks):
        if b.kind == "file":
            delimiter = "HAL_DOC_EOF"
            assert delimiter not in b.text
            out.append(f"cat > {shlex.quote(b.arg)} <<'{delimiter}'\n{b.text}{delimiter}")
        elif b.kind in ("run", "python"):
            text = b.text
            if b.kind == "python":
                script = os.path.join(work, f".block{n}.py")
                with open(script, "w", encoding="utf-8") as f:
                    f.write(b.text)
                text = f"python3 {shlex.quote(script)}\n"
            log = shlex.quote(os.path.join(work, f".block{n}.log"))
            out.append(f"echo '--- {b.where()}'")
            # A brace group, not a subshell: exports carry on to the next block. `set -e` inside
            # it stops the block at its first failing command; the trap names the block.
            out.append(f"set -e; trap 'cat {log} >&4; echo \"doc: {b.where()}: a command failed\" >&4; "
                       "exit 1' ERR")
            out.append("{\n" + text + f"}} > {log} 2>&1 </dev/null")
            out.append(f"set +e; trap - ERR; cat {log}; cd {shlex.quote(work)}")
            if b.arg:
                out.append(f"grep -qF -- {shlex.quote(b.arg)} {log} || "
                           f"{{ echo \"doc: {b.where()}: the output lacks "
                           f"{shlex.quote(b.arg)}\" >&2; exit 1; }}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--path", action="append", default=[],
                        help="a directory to put first on PATH (e.g. the CUDA toolkit's bin)")
    parser.add_argument("--link", action="append", default=[], metavar="NAME=PATH",
                        help="also link NAME in each session's folder to PATH (a folder of the "
                             "checkout that the docs' commands use, such as python)")
    parser.add_argument("--list", action="store_true", help="list the blocks and exit")
    parser.add_argument("docs", nargs="+")
    args = parser.parse_args()

    failed = False
    sessions = []
    for doc in args.docs:
        blocks = read_blocks(doc)
        for b in blocks:
            if b.kind is None:
                print(f"doc: {b.where()}: code block without a marker: add "
                      f"<!-- doc: run|python|file NAME|text|fragment|not run: REASON --> above it")
                failed = True
            elif b.kind == "bad":
                print(f"doc: {b.where()}: malformed marker '{b.marker}'")
                failed = True
            elif args.list:
                print(f"{b.where()}: {b.kind}{' ' + b.arg if b.arg else ''}")
        sessions.append((doc, blocks))
    if failed or args.list:
        return 1 if failed else 0

    build = os.path.abspath(args.build_dir)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.abspath(p) for p in args.path] + [env["PATH"]])
    # A reader's shell starts without these. The caches go under each session's HOME, so that
    # what a document's commands tune or cache never reaches the user's own cache.
    # The Vulkan driver's own shader cache is the exception: it is keyed by the shaders' content,
    # so sharing the user's lets the sessions reuse what the rest of the suite compiled (lavapipe
    # takes minutes to compile the pack from an empty cache).
    if "MESA_SHADER_CACHE_DIR" not in env:
        env["MESA_SHADER_CACHE_DIR"] = env.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
    for name in ("HAL_DEVICE", "HAL_BACKENDS", "HAL_CUDA_LIBRARY", "PKG_CONFIG_PATH",
                 "LD_LIBRARY_PATH", "HAL_CACHE_DIR", "XDG_CACHE_HOME"):
        env.pop(name, None)
    for doc, blocks in sessions:
        if not any(b.kind in ("run", "python") for b in blocks):
            continue
        work = os.path.abspath(os.path.join(args.work_dir, os.path.basename(doc)[:-3]))
        subprocess.run(["rm", "-rf", work], check=True)
        os.makedirs(work)
        os.symlink(build, os.path.join(work, "build"))
        for link in args.link:
            name, _, target = link.partition("=")
            os.symlink(os.path.abspath(target), os.path.join(work, name))
        env["HOME"] = work
        script = session_script(blocks, work)
        with open(os.path.join(work, ".session.sh"), "w", encoding="utf-8") as f:
            f.write(script)
        print(f"=== {doc}", flush=True)
        result = subprocess.run(["bash", os.path.join(work, ".session.sh")], env=env)
        if result.returncode != 0:
            print(f"doc: {doc}: FAILED (the session is {work}/.session.sh)", flush=True)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
