"""The benchmark scripts run (briefly): a figure that cannot be produced is a failure. Their
numbers are not judged here: benchmarks are not timed tests."""

import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks")


def test_launch_overhead_script_runs(vk, kernels, tmp_path):
    out = tmp_path / "launch.json"
    run = subprocess.run([sys.executable, os.path.join(BENCH, "launch_overhead.py"),
                          "--device", "vulkan:0", "--kernels", kernels, "--launches", "20",
                          "--runs", "2", "--json", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "from Python" in run.stdout and "Python adds" in run.stdout
    assert '"python_median_us"' in out.read_text()


def test_the_package_ships_type_stubs():
    import hal

    stub = os.path.join(os.path.dirname(hal.__file__), "_hal.pyi")
    assert os.path.isfile(stub)
    text = open(stub, encoding="utf-8").read()
    assert "class Function" in text and "class Stream" in text
    assert os.path.isfile(os.path.join(os.path.dirname(hal.__file__), "py.typed"))
