"""Launching from Python: packing by the reflected parameters, and every misuse raising."""

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import hal


@pytest.fixture
def saxpy(pack):
    return pack.kernel("saxpy")  # saxpy(X, Y, n: u32, alpha: f32)


def test_params_come_from_reflection(saxpy):
    assert [p[0] for p in saxpy.params] == ["pointer", "pointer", "value", "value"]
    assert [p[1] for p in saxpy.params] == [8, 8, 4, 4]
    assert [p[3] for p in saxpy.params] == ["", "", "integer", "float"]
    assert saxpy.name == "saxpy"


def test_arguments_of_the_wrong_kind_raise_type_error(dev, saxpy):
    x, y = dev.zeros(64), dev.zeros(64)
    with pytest.raises(TypeError, match=r"'saxpy' takes 4 arguments \(a pointer, a pointer, "
                                         r"4-byte integer, 4-byte float\), got 3"):
        saxpy(1, 256, x, y, 64)
    with pytest.raises(TypeError, match="parameter 1 .a pointer.: takes a hal.Array .* got "
                                        "float: is an argument missing or out of order"):
        saxpy(1, 256, x, 2.0, 64, y)
    with pytest.raises(TypeError, match="parameter 2 .4-byte integer.: got a hal.Array"):
        saxpy(1, 256, x, y, x, 2.0)
    with pytest.raises(TypeError, match="parameter 3 .4-byte float.: takes an int, a float or a "
                                        "NumPy scalar, got str"):
        saxpy(1, 256, x, y, 64, "2")
    # The two values swapped: the integer parameter refuses the float.
    with pytest.raises(TypeError, match="parameter 2 .4-byte integer.: got float 2.0: is an "
                                        "argument missing or out of order"):
        saxpy(1, 256, x, y, 2.0, 64)
    with pytest.raises(TypeError, match="parameter 3 .4-byte float.: got a NumPy int32: is an"):
        saxpy(1, 256, x, y, 64, np.int32(2))
    with pytest.raises(TypeError, match="got a NumPy float16 of 2 bytes"):
        saxpy(1, 256, x, y, 64, np.float16(2))
    with pytest.raises(TypeError, match="parameter 2 .4-byte integer.: got a NumPy int64 of 8"):
        saxpy(1, 256, x, y, np.int64(64), 2.0)
    with pytest.raises(ValueError, match="4294967296 does not fit in 4 bytes"):
        saxpy(1, 256, x, y, 2**32, 2.0)
    with pytest.raises(TypeError, match="grid must be an int or a tuple"):
        saxpy("1", 256, x, y, 64, 2.0)
    with pytest.raises(ValueError, match="block has 4 dimensions"):
        saxpy(1, (256, 1, 1, 1), x, y, 64, 2.0)


def test_values_convert_by_their_parameter(dev, saxpy):
    x = dev.asarray(np.ones(64, np.float32))
    # A Python int for a float parameter is its value as a float (the IR says which is which).
    for n, alpha in [(64, 2.0), (np.uint32(64), np.float32(2.0)), (np.int32(64), np.float64(2.0)),
                     (True, 2.0), (64, 2)]:
        y = dev.zeros(64)
        saxpy(1, 256, x, y, n, alpha)
        count = 1 if n is True else 64
        expected = np.where(np.arange(64) < count, 2.0, 0.0).astype(np.float32)
        np.testing.assert_array_equal(y.numpy(), expected)


def test_hal_validation_reaches_python(dev, saxpy):
    x, y = dev.zeros(64), dev.zeros(64)
    with pytest.raises(hal.OutOfRangeError, match="hal_launch: .*parameter 0"):
        saxpy(1, 256, x.address + (1 << 40), y, 64, 2.0)  # an address inside no allocation
    with pytest.raises(hal.OutOfRangeError, match="hal_launch: grid.x is 0"):
        saxpy(0, 256, x, y, 64, 2.0)


def test_closed_stream_freed_array_and_unloaded_module_raise(dev, pack, saxpy):
    x, y = dev.zeros(64), dev.zeros(64)
    s = dev.stream()
    saxpy(1, 256, x, y, 64, 2.0, stream=s)
    s.close()
    assert s.closed
    with pytest.raises(hal.InvalidHandleError, match="stream was closed"):
        saxpy(1, 256, x, y, 64, 2.0, stream=s)
    with pytest.raises(hal.InvalidHandleError):
        s.synchronize()

    gone = dev.zeros(64)
    gone.free()
    with pytest.raises(hal.InvalidArgumentError, match="freed"):
        saxpy(1, 256, gone, y, 64, 2.0)

    module = dev.load(pack.path + "/" + pack.manifest["copy_f32"]["spirv" if "spirv" in
                                                                  dev.info.irs else "ptx"]["file"])
    copy = module["copy_f32"]
    module.unload()
    assert module.unloaded
    with pytest.raises(hal.InvalidHandleError):
        copy(1, 256, x, y, 64)
    with pytest.raises(hal.InvalidHandleError, match="unloaded"):
        module["copy_f32"]


def test_array_of_another_device_is_refused(saxpy, dev):
    others = [d for d in hal.devices() if d != dev]
    if not others:
        pytest.skip("one device only")
    mine, theirs = dev.zeros(64), others[0].zeros(64)
    with pytest.raises(hal.Error, match="hal_launch: .*parameter 1"):
        saxpy(1, 256, mine, theirs, 64, 2.0)


def test_bad_blobs_raise(dev):
    with pytest.raises(hal.InvalidIRError, match="hal_module_load"):
        dev.load(b"this is not a kernel")
    with pytest.raises(FileNotFoundError):
        dev.load("/no/such/file.spv")


def test_memory_stays_alive_while_work_is_pending(dev, saxpy):
    s = dev.stream()
    x = dev.asarray(np.ones(4096, np.float32), stream=s)
    y = dev.zeros(4096, stream=s)
    saxpy(16, 256, x, y, 4096, 3.0, stream=s)
    assert s._pending_buffers == 2  # x and y, each kept once
    result = y  # the stream keeps x alive after the last reference goes
    del x
    s.synchronize()
    assert s._pending_buffers == 0
    np.testing.assert_array_equal(result.numpy(stream=s), np.full(4096, 3.0, np.float32))
    s.close()


def test_streams_events_and_context_managers(dev, saxpy):
    x, y = dev.asarray(np.ones(1024, np.float32)), dev.zeros(1024)
    with dev.stream() as s:
        start, end = dev.event(), dev.event()
        start.record(s)
        saxpy(4, 256, x, y, 1024, 1.0, stream=s)
        end.record(s)
        end.synchronize()
        assert end.query() and s.query()
        ms = start.elapsed_ms(end)
        assert ms >= 0.0
    assert s.closed
    np.testing.assert_array_equal(y.numpy(), np.ones(1024, np.float32))


def test_waits_release_the_gil(vk, kernels):
    """While one thread waits in synchronize for a long kernel, another runs Python."""
    from conftest import Pack

    naive = Pack(kernels, vk).kernel("matmul_naive_f32")
    n = 256
    a = vk.asarray(np.ones((n, n), np.float32))
    c = vk.zeros((n, n))
    s = vk.stream()
    ticks = 0
    done = False
    window = {}

    def waiter():
        nonlocal done
        for _ in range(4):
            naive((n // 16, n // 16), (16, 16), a, a, c, n, n, n, n, n, n, 1.0, 0.0, stream=s)
        window["start"], t0 = ticks, time.perf_counter()
        s.synchronize()
        window["end"], window["seconds"] = ticks, time.perf_counter() - t0
        done = True

    thread = threading.Thread(target=waiter)
    thread.start()
    while not done:
        ticks += 1
    thread.join()
    s.close()
    assert window["seconds"] > 0.02, "the kernel was too quick to show anything"
    # With the GIL held through the wait this thread could not count at all meanwhile.
    assert window["end"] - window["start"] > 1000, window


def test_two_threads_launch_on_two_streams(dev, saxpy):
    n, rounds = 2048, 20
    results = {}

    def work(k):
        with dev.stream() as s:
            x = dev.asarray(np.full(n, k, np.float32), stream=s)
            y = dev.zeros(n, stream=s)
            for _ in range(rounds):
                saxpy(8, 256, x, y, n, 1.0, stream=s)
            results[k] = y.numpy(stream=s)

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in (1, 2):
        np.testing.assert_array_equal(results[k], np.full(n, k * rounds, np.float32))


def test_no_leak_report_at_exit(kernels):
    script = textwrap.dedent(f"""
        import numpy as np, hal
        dev = hal.devices()[0]
        kept = dev.asarray(np.ones(100, np.float32))   # still referenced at exit
        s = dev.stream()                                # never closed
        m = dev.load("{kernels}/" + ("copy_f32.spv" if "spirv" in dev.info.irs else "smoke.ptx"))
        f = m["copy_f32"]
        f(1, 256, kept, dev.zeros(100), 100)
        print("ran")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "ran" in run.stdout
    assert "leak report" not in run.stderr, run.stderr
