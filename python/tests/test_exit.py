"""Interpreter exit: what the program still holds then is its own, not a leak, and must be
released silently; what nothing can release any more (a leaked reference, an allocation made
through the C ABI and never freed) is still reported, by hal and by the bindings."""

import os
import subprocess
import sys
import textwrap


def run(script, dev):
    script = f"import ctypes, numpy as np, hal\ndev = hal.device({dev.selector!r})\n" + \
        textwrap.dedent(script)
    env = dict(os.environ, HAL_LOG_LEVEL="warn")  # the level that shows hal's leak report
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)


def assert_silent(result):
    assert result.returncode == 0, result.stderr
    assert "leaked" not in result.stderr, result.stderr
    assert "leak report" not in result.stderr, result.stderr


def test_dlpack_view_alive_at_exit_is_not_a_leak(dev):
    # As a new user would write it: the view is still referenced when the interpreter exits.
    assert_silent(run("""
        y = dev.asarray(np.ones(1000, dtype=np.float32))
        v = np.from_dlpack(y)
    """, dev))


def test_every_kind_of_view_alive_at_exit_is_not_a_leak(dev):
    assert_silent(run("""
        y = dev.asarray(np.arange(1000, dtype=np.float32).reshape(100, 10))
        views = [np.from_dlpack(y), np.from_dlpack(y[3:7]), np.asarray(y), y.host_view(),
                 y.__dlpack__(), y.__dlpack__(max_version=(1, 0))]   # capsules never consumed
        only = np.from_dlpack(dev.asarray(np.ones(16, np.int32)))    # the array itself is gone

        class Node:                                  # a view kept by a cycle: garbage at exit
            pass
        node = Node()
        node.self, node.view = node, np.from_dlpack(dev.asarray(np.ones(8, np.float64)))
        del node
        print(views[0][5, 5], only[0])
    """, dev))


def test_a_leaked_reference_is_still_reported(dev):
    # Nothing can drop the extra reference: the memory stays allocated at exit, a real leak.
    result = run("""
        y = dev.asarray(np.ones(1000, dtype=np.float32))
        v = np.from_dlpack(y)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(y))
    """, dev)
    assert result.returncode == 0, result.stderr
    assert "leak report at exit" in result.stderr, result.stderr
    assert "1 device allocation, 4000 bytes" in result.stderr, result.stderr
    assert "leaked" in result.stderr, result.stderr   # the bindings' own check still runs


def test_an_allocation_made_through_the_c_abi_and_never_freed_is_reported(dev):
    result = run("""
        lib = ctypes.CDLL("libhal.so.0")               # the library the package already loaded
        address = ctypes.c_uint64()
        assert lib.hal_mem_alloc(ctypes.c_void_p(dev._handle), ctypes.c_size_t(4000),
                                 ctypes.byref(address)) == 0
        v = np.from_dlpack(dev.asarray(np.ones(10, np.float32)))   # not a leak: not reported
    """, dev)
    assert result.returncode == 0, result.stderr
    assert "leak report at exit" in result.stderr, result.stderr
    assert "1 device allocation, 4000 bytes" in result.stderr, result.stderr
    assert "leaked" not in result.stderr, result.stderr
