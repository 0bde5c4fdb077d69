import subprocess
import sys

import pytest

import hal


def test_devices_are_listed_with_their_info():
    devices = hal.devices()
    assert devices, "no device at all: the tests need lavapipe or the CPU PTX device"
    for i, d in enumerate(devices):
        assert d.info.global_index == i
        assert d.info.name and d.info.backend in ("cuda", "vulkan")
        assert d.info.max_threads_per_block >= 64
        assert len(d.info.max_grid_dim) == 3
        assert d.info.irs and set(d.info.irs) <= {"ptx", "spirv", "cubin", "fatbin"}


def test_every_selector_form_finds_the_device(dev):
    assert hal.device(dev.selector) == dev
    assert hal.device(str(dev.info.global_index)) == dev
    assert hal.device(dev.info.global_index) == dev
    # Part of the name: the first word is unique among this process's devices.
    assert hal.device(dev.info.name.split()[0]) is not None


def test_default_device():
    assert hal.device() == hal.device("default") == hal.devices()[0]


def test_bad_selectors_raise_with_hal_message():
    with pytest.raises(hal.NotFoundError) as e:
        hal.device("vulkan:77")
    assert e.value.status == 3
    assert e.value.status_name == "HAL_ERROR_NOT_FOUND"
    assert str(e.value).startswith("hal_device_find: ")
    assert isinstance(e.value, LookupError) and isinstance(e.value, hal.Error)
    with pytest.raises(hal.InvalidArgumentError, match="unknown backend 'nosuchbackend'"):
        hal.device("nosuchbackend:7")
    assert type(e.value).__module__ == "hal"


def test_info_is_read_only(dev):
    with pytest.raises(AttributeError):
        dev.info.name = "x"
    with pytest.raises(AttributeError):
        dev.info.no_such_field  # noqa: B018
    assert dev.info.as_dict()["name"] == dev.info.name


def test_python_m_hal_lists_backends_and_devices():
    out = subprocess.run([sys.executable, "-m", "hal"], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith(f"hal {hal.__version__}\n")
    assert "\nBackends:\n" in out and "\nDevices:\n" in out
    for d in hal.devices():
        assert f"[{d.info.global_index}] {d.selector}  {d.info.name}" in out
    for b in hal.backends():
        assert ("available" if b["available"] else "unavailable") in out
        # Every backend is a driver module bundled beside the package's libhal.
        assert b["module"].endswith(f"/hal/drivers/libhal_driver_{b['name']}.so"), b
