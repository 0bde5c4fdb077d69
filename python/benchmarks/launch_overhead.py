"""What a kernel launch from Python costs over the same launch from C, in one run.

    python launch_overhead.py [--device vulkan:0] [--kernels DIR] [--launches 2000] [--runs 7]

Each run issues the pack's `saxpy` on a small vector `--launches` times twice: from Python,
`fn(grid, block, x, y, n, alpha)` in a loop (packing every argument each time), and from C++,
hal_launch in a loop over arguments packed once (the extension's baseline, GIL held, as a C
program calls it). The stream is synchronised after each loop, outside the timing. Prints the
median over the runs of each, in microseconds per launch, and their difference: what Python adds.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np

import hal


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="vulkan:0")
    parser.add_argument("--kernels", default=os.path.expanduser("~/hal/share/hal/kernels"))
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    dev = hal.device(args.device)
    with open(os.path.join(args.kernels, "manifest.json"), encoding="utf-8") as f:
        entry = {k["name"]: k for k in json.load(f)["kernels"]}["saxpy"]
    ir = "spirv" if "spirv" in dev.info.irs else "ptx"
    saxpy = dev.load(os.path.join(args.kernels, entry[ir]["file"]))[entry[ir]["entry_point"]]
    n = 256
    x, y = dev.asarray(np.ones(n, np.float32)), dev.zeros(n)
    stream = dev.stream()
    launch_args = (x, y, n, 1.0)

    python_us, c_us = [], []
    saxpy._launch_repeated(100, 1, 256, *launch_args, stream=stream)  # warm up both paths
    stream.synchronize()
    for run in range(args.runs):
        start = time.perf_counter()
        for _ in range(args.launches):
            saxpy(1, 256, *launch_args, stream=stream)
        python_us.append((time.perf_counter() - start) / args.launches * 1e6)
        stream.synchronize()
        seconds = saxpy._launch_repeated(args.launches + 1, 1, 256, *launch_args, stream=stream)
        c_us.append(seconds / args.launches * 1e6)
        stream.synchronize()
        print(f"run {run + 1}/{args.runs}: Python {python_us[-1]:.2f} us, C {c_us[-1]:.2f} us",
              flush=True)
    stream.close()
    p, c = statistics.median(python_us), statistics.median(c_us)
    print(f"{dev.selector} ({dev.name}), {args.launches} launches of saxpy per run, "
          f"median of {args.runs} runs:")
    print(f"  from Python  {p:8.2f} us per launch")
    print(f"  from C       {c:8.2f} us per launch")
    print(f"  Python adds  {p - c:8.2f} us ({p / c:.2f}x)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"device": dev.selector, "launches": args.launches, "runs": args.runs,
                       "python_us": python_us, "c_us": c_us, "python_median_us": p,
                       "c_median_us": c, "added_us": p - c}, f, indent=1)


if __name__ == "__main__":
    main()
