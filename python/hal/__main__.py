"""python -m hal: the same listing as hal-info, from the Python package.

    python -m hal     every device hal can use, every backend it cannot use with the reason
Exit status 0 when discovery worked (also with no devices), 1 when it failed.
"""

import sys

from . import Error, __version__, backends, devices


def driver_version_text(i):
    v = i.driver_version
    if i.backend == "cuda":
        return f"{v // 1000}.{v % 1000 // 10}"
    if i.vendor_id == 0x10DE:
        return f"{v >> 22}.{(v >> 14) & 0xFF}.{(v >> 6) & 0xFF}.{v & 0x3F}"
    return f"{(v >> 22) & 0x7F}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


def api_version_text(i):
    v = i.api_version
    if v == 0:
        return ""
    if i.backend == "cuda":
        return f"{v // 1000}.{v % 1000 // 10}"
    return f"{(v >> 22) & 0x7F}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


def conformance_text(packed):
    if packed == 0:
        return ""
    return f"{packed >> 24}.{(packed >> 16) & 0xFF}.{(packed >> 8) & 0xFF}.{packed & 0xFF}"


def print_device(d):
    i = d.info
    print(f"  [{i.global_index}] {d.selector}  {i.name}")
    print(f"      type            {'CPU' if i.is_cpu else 'GPU'}"
          f"{', unified memory' if i.unified_memory else ''}")
    extra = f", {i.driver_info}" if i.driver_info else ""
    print(f"      driver          {i.driver_name}, version {driver_version_text(i)} "
          f"({i.driver_version}){extra}")
    if i.backend == "vulkan":
        conformance = conformance_text(i.conformance_version) or "none claimed"
        print(f"      Vulkan          API {api_version_text(i)}, driver id {i.driver_id}, "
              f"conformance {conformance}")
    print(f"      vendor/device   0x{i.vendor_id:04x} / 0x{i.device_id:04x}")
    print(f"      uuid            {i.uuid.hex()}")
    print(f"      memory          {i.total_memory / (1 << 20):.1f} MiB (largest allocation "
          f"{i.max_allocation_size / (1 << 20):.1f} MiB)")
    print(f"      IRs             {' '.join(i.irs)}")
    if i.compute_capability[0] != 0:
        print(f"      compute cap.    {i.compute_capability[0]}.{i.compute_capability[1]}")
    print(f"      compute units   {i.compute_units}, subgroup size {i.subgroup_size}")
    b, g = i.max_block_dim, i.max_grid_dim
    print(f"      block           max {i.max_threads_per_block} threads, "
          f"{b[0]} x {b[1]} x {b[2]}")
    print(f"      grid            {g[0]} x {g[1]} x {g[2]}")
    print(f"      shared memory   {i.max_shared_memory_per_block} bytes per block")
    print(f"      pointer align   {i.pointer_alignment} bytes")
    print(f"      features        {' '.join(i.feature_names)}")


def main(argv):
    if len(argv) > 1:
        print("usage: python -m hal\nLists the devices hal can use and the backends it cannot "
              "use, with the reason.", file=sys.stderr if argv[1] not in ("-h", "--help")
              else sys.stdout)
        return 0 if argv[1] in ("-h", "--help") else 2
    print(f"hal {__version__}")
    try:
        found_backends = backends()
        found = devices()
    except Error as e:
        print(f"warning: {e}")
        return 1
    print("\nBackends:")
    if not found_backends:
        print("  none built in")
    for b in found_backends:
        if b["available"]:
            print(f"  {b['name']:<8} available, {b['device_count']} device(s)")
        else:
            print(f"  {b['name']:<8} unavailable: {b['reason']}")
    print("\nDevices:")
    if not found:
        print("  none: no backend found a device (see the reasons above)")
    for d in found:
        print_device(d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
