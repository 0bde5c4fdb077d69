import numpy as np
import pytest

import hal

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.bool_, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_round_trip_every_dtype(dev, dtype):
    rng = np.random.default_rng(1)
    host = (rng.standard_normal((37, 5)) * 100).astype(dtype)
    a = dev.asarray(host)
    assert a.shape == (37, 5) and a.dtype == np.dtype(dtype) and a.nbytes == host.nbytes
    back = a.numpy()
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)


def test_round_trip_bfloat16(dev):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    host = np.linspace(-4, 4, 64).astype(ml_dtypes.bfloat16)
    back = dev.asarray(host).numpy()
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back.view(np.uint16), host.view(np.uint16))


def test_views_along_the_first_axis_share_memory(dev):
    host = np.arange(24, dtype=np.float32).reshape(6, 4)
    a = dev.asarray(host)
    np.testing.assert_array_equal(a[2].numpy(), host[2])
    np.testing.assert_array_equal(a[-1].numpy(), host[-1])
    np.testing.assert_array_equal(a[1:4].numpy(), host[1:4])
    assert a[4:2].shape == (0, 4)
    a[1:3].copy_from(np.zeros((2, 4), np.float32))
    expected = host.copy()
    expected[1:3] = 0
    np.testing.assert_array_equal(a.numpy(), expected)
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(ValueError, match="step 1"):
        a[::2]
    with pytest.raises(TypeError):
        a[1, 2]


def test_zeros_empty_and_copies(dev):
    z = dev.zeros((3, 3), np.int32)
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 3), np.int32))
    e = dev.empty(0)
    assert e.shape == (0,) and e.numpy().shape == (0,)
    src = dev.asarray(np.arange(9, dtype=np.int32).reshape(3, 3))
    src.copy_to(z)
    np.testing.assert_array_equal(z.numpy(), src.numpy())
    with pytest.raises(ValueError, match="does not match"):
        z.copy_from(np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="plain numbers"):
        dev.empty(3, object)


def test_out_of_memory_raises_and_the_device_keeps_working(dev):
    with pytest.raises(hal.OutOfMemoryError) as e:
        dev.empty(dev.info.max_allocation_size + 1, np.uint8)
    assert "hal_mem_alloc" in str(e.value)
    np.testing.assert_array_equal(dev.asarray(np.ones(4)).numpy(), np.ones(4))


def test_freed_array_raises_and_so_do_its_views(dev):
    a = dev.asarray(np.ones(8, np.float32))
    view = a[2:4]
    a.free()
    for used in (a, view):
        with pytest.raises(hal.InvalidArgumentError, match="freed"):
            used.numpy()
    a.free()  # a second free does nothing


def test_dlpack_and_array_protocol_exchange_with_numpy(dev):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = dev.asarray(host)
    assert a.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(a), host)
    np.testing.assert_array_equal(np.asarray(a), host)
    copied = np.from_dlpack(a, copy=True)
    a.copy_from(np.zeros((3, 4), np.int32))
    np.testing.assert_array_equal(copied, host)  # a copy does not follow the array
    if a.host_view() is None:  # the CPU PTX device, CUDA devices: copies only
        with pytest.raises(BufferError, match="only a copy"):
            a.__dlpack__(copy=False)
        with pytest.raises(ValueError, match="only a copy"):
            np.asarray(a, copy=False)

    class Producer:  # exports only DLPack, as other frameworks' CPU tensors do
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    b = dev.asarray(Producer(host.astype(np.float16)))
    assert b.dtype == np.float16
    np.testing.assert_array_equal(b.numpy(), host.astype(np.float16))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_dlpack_export_keeps_the_dtype_and_the_rows(dev, dtype):
    host = (np.arange(24) % 5).astype(dtype).reshape(6, 4)
    a = dev.asarray(host)
    for exported, expected in ((np.from_dlpack(a), host), (np.from_dlpack(a[2:5]), host[2:5])):
        assert exported.dtype == host.dtype
        np.testing.assert_array_equal(exported, expected)


def test_dlpack_has_no_bfloat16(dev):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with pytest.raises(BufferError, match="DLPack has no type for bfloat16"):
        np.from_dlpack(dev.asarray(np.ones(4, ml_dtypes.bfloat16)))


def test_host_view_is_the_memory_itself_where_the_device_allows(vk, kernels):
    """lavapipe's device memory is host-visible: NumPy sees a kernel's writes without a copy."""
    from conftest import Pack

    a = vk.asarray(np.arange(1024, dtype=np.float32))
    view = a.host_view()
    assert view is not None and view.shape == (1024,) and view.dtype == np.float32
    shared = np.from_dlpack(a)                      # zero-copy too
    fill = Pack(kernels, vk).kernel("fill_f32")
    fill(4, 256, a, 1024, 7.0)
    vk.synchronize()
    assert (view == 7.0).all() and (shared == 7.0).all()
    view[:10] = -1.0                                # the host writes; the device reads it
    np.testing.assert_array_equal(a.numpy()[:12], [-1.0] * 10 + [7.0] * 2)
    np.asarray(a, copy=False)[0] = 5.0
    assert a.numpy()[0] == 5.0
    row = vk.asarray(np.arange(12, dtype=np.int16).reshape(3, 4))[1]
    np.testing.assert_array_equal(row.host_view(), [4, 5, 6, 7])
    del a                                           # the views keep the memory alive
    assert view[20] == 7.0 and shared[20] == 7.0
