"""Fixtures for the hal package's tests.

The tests run on every device of the process that takes an IR of the kernel pack: lavapipe
(`vulkan:0`) where Vulkan is installed, and the CPU PTX device (`cuda:0`) when HAL_CUDA_LIBRARY
names hal's CPU PTX driver, as tools/dev.sh sets it. `--kernels DIR` is the kernel pack
(share/hal/kernels of an installed hal).
"""

import json
import os

import pytest

import hal


def pytest_addoption(parser):
    parser.addoption("--kernels", default=os.environ.get("HAL_KERNELS", ""),
                     help="the kernel pack's folder (share/hal/kernels of an installed hal)")


def _devices():
    found = []
    for d in hal.devices():
        if d.info.backend == "vulkan" and d.info.backend_index == 0:
            found.append(d)
        elif d.info.backend == "cuda" and d.info.backend_index == 0:
            found.append(d)
    return found


DEVICES = _devices()


def pytest_generate_tests(metafunc):
    if "dev" in metafunc.fixturenames:
        metafunc.parametrize("dev", DEVICES, ids=[d.selector for d in DEVICES])


@pytest.fixture(scope="session")
def kernels(request):
    path = request.config.getoption("--kernels")
    if not path or not os.path.isfile(os.path.join(path, "manifest.json")):
        pytest.skip("no kernel pack: pass --kernels <prefix>/share/hal/kernels")
    return path


class Pack:
    """The kernel pack on one device: pack.kernel(name) loads the file that holds it in the
    device's IR."""

    def __init__(self, path, dev):
        with open(os.path.join(path, "manifest.json"), encoding="utf-8") as f:
            self.manifest = {k["name"]: k for k in json.load(f)["kernels"]}
        self.path, self.dev, self.modules = path, dev, {}

    def kernel(self, name):
        entry = self.manifest[name]
        ir = "spirv" if "spirv" in self.dev.info.irs else "ptx"
        if entry[ir] is None:  # the tensor-core matmul exists in PTX only
            pytest.skip(f"{name} is not in the pack's {ir} (PTX only)")
        missing = [r for r in entry["requires"] if r not in self.dev.info.feature_names]
        if missing:
            pytest.skip(f"{name} needs {', '.join(missing)}, which the device lacks")
        file = entry[ir]["file"]
        if file not in self.modules:
            self.modules[file] = self.dev.load(os.path.join(self.path, file))
        return self.modules[file][entry[ir]["entry_point"]]


@pytest.fixture
def pack(kernels, dev):
    return Pack(kernels, dev)


@pytest.fixture
def vk():
    try:
        return hal.device("vulkan:0")
    except hal.NotFoundError:
        pytest.skip("no Vulkan device")
