#!/usr/bin/env python3
"""Runs a program with HAL_TRACE set and checks the timeline file it leaves.

  check_trace.py --expect workload|matmul|unwritable --trace FILE [--same-clock] -- PROGRAM ARGS...

workload    tests/trace/trace_workload.c: exact host call sequence, per-stream device spans in
            issue order with their names, sizes and geometry.
matmul      the matmul sample: one span per launch of its kernel, copies, host calls.
unwritable  FILE cannot be created: the program must still succeed and the log must say so.

--same-clock: the device's timestamps are on the host's clock (calibrated, as on lavapipe), so
causality is checked too: a span starts no earlier than the call that issued it, and work after
a cross-stream wait starts no earlier than the work waited for ends.

Exit status: 0 pass, 1 fail, 77 skipped (the program found no device).
"""
import argparse
import json
import os
import subprocess
import sys

EPS_US = 50.0  # rounding of microsecond timestamps, and clock-conversion slack


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def load(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)
    expect(isinstance(events, list), "the trace is not a JSON array of events")
    for e in events:
        expect(e.get("ph") in ("M", "X"), f"unexpected event phase: {e}")
        for key in ("name", "pid", "tid"):
            expect(key in e, f"event without '{key}': {e}")
        if e["ph"] == "X":
            expect(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"bad ts: {e}")
            expect(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, f"bad dur: {e}")
    return events


def names_of(events, kind):
    """{(pid, tid): name} from the metadata events of |kind| (process_name or thread_name)."""
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == kind}


def host_calls(events):
    calls = sorted((e for e in events if e["ph"] == "X" and e.get("cat") == "api"),
                   key=lambda e: e["ts"])
    expect(calls, "no host call spans")
    threads = {e["tid"] for e in calls}
    expect(len(threads) == 1, f"calls from {len(threads)} threads; the programs use one")
    for before, after in zip(calls, calls[1:]):
        expect(after["ts"] + EPS_US >= before["ts"] + before["dur"],
               f"host calls overlap on one thread: {before['name']} and {after['name']}")
    return calls


def device_rows(events):
    """{stream name: [spans in time order]} for the one traced device."""
    processes = names_of(events, "process_name")
    devices = {pid for (pid, _), name in processes.items() if name.startswith("device ")}
    expect(len(devices) == 1, f"expected one device row, got {sorted(devices)}")
    pid = devices.pop()
    threads = names_of(events, "thread_name")
    rows = {}
    for e in events:
        if e["ph"] == "X" and e["pid"] == pid:
            name = threads.get((pid, e["tid"]))
            expect(name is not None, f"a device span on an unnamed row: {e}")
            rows.setdefault(name, []).append(e)
    for name, spans in rows.items():
        spans.sort(key=lambda e: e["ts"])
        for before, after in zip(spans, spans[1:]):
            expect(after["ts"] + EPS_US >= before["ts"] + before["dur"],
                   f"{name}: '{before['name']}' and '{after['name']}' overlap on one stream")
    return rows


def check_sequence(spans, expected, row):
    got = [(e["cat"], e["name"]) for e in spans]
    want = [(cat, name) for cat, name, _ in expected]
    expect(got == want, f"{row}: spans {got}, expected {want}")
    for span, (_, _, args) in zip(spans, expected):
        for key, value in args.items():
            expect(span.get("args", {}).get(key) == value,
                   f"{row}: '{span['name']}' has {key}={span.get('args', {}).get(key)}, "
                   f"expected {value}")


def check_workload(events, same_clock):
    calls = host_calls(events)
    want_calls = (["hal_device_find", "hal_device_get_info", "hal_module_load",
                   "hal_module_get_function", "hal_stream_create", "hal_stream_create",
                   "hal_event_create"] + ["hal_mem_alloc"] * 4 +
                  ["hal_memcpy_htod", "hal_memcpy_htod", "hal_launch", "hal_memcpy_dtod",
                   "hal_memset_d32", "hal_event_record", "hal_stream_wait_event", "hal_launch",
                   "hal_memcpy_dtoh", "hal_stream_synchronize"] + ["hal_mem_free"] * 4 +
                  ["hal_event_destroy", "hal_stream_destroy", "hal_stream_destroy",
                   "hal_module_unload"])
    got_calls = [e["name"] for e in calls]
    expect(got_calls == want_calls, f"host calls {got_calls}, expected {want_calls}")
    expect(all("status" not in e.get("args", {}) for e in calls), "a call reported a failure")

    rows = device_rows(events)
    expect(sorted(rows) == ["stream 1", "stream 2"], f"stream rows {sorted(rows)}")
    nbytes = 4096 * 4
    kernel = ("kernel", "vector_add_f32", {"grid": [16, 1, 1], "block": [256, 1, 1]})
    check_sequence(rows["stream 1"], [
        ("copy", "copy host to device", {"bytes": nbytes}),
        ("copy", "copy host to device", {"bytes": nbytes}),
        kernel,
        ("copy", "copy device to device", {"bytes": nbytes}),
        ("fill", "fill", {"bytes": nbytes}),
    ], "stream 1")
    check_sequence(rows["stream 2"], [
        kernel,
        ("copy", "copy device to host", {"bytes": nbytes}),
    ], "stream 2")

    if same_clock:
        launches = [e for e in calls if e["name"] == "hal_launch"]
        kernels = [rows["stream 1"][2], rows["stream 2"][0]]
        for call, span in zip(launches, kernels):
            expect(span["ts"] + EPS_US >= call["ts"],
                   f"a kernel starts at {span['ts']} us, before hal_launch at {call['ts']} us")
        fill = rows["stream 1"][-1]
        waited = rows["stream 2"][0]
        expect(waited["ts"] + EPS_US >= fill["ts"] + fill["dur"],
               f"stream 2's kernel starts at {waited['ts']} us, before the work it waits for "
               f"ends at {fill['ts'] + fill['dur']} us")


def check_matmul(events, same_clock):
    calls = host_calls(events)
    launches = [e for e in calls if e["name"] == "hal_launch"]
    expect(len(launches) >= 2, f"{len(launches)} hal_launch calls")
    for name in ("hal_module_load", "hal_memcpy_htod", "hal_memcpy_dtoh", "hal_event_record"):
        expect(any(e["name"] == name for e in calls), f"no {name} span")
    rows = device_rows(events)
    expect(list(rows) == ["stream 1"], f"stream rows {sorted(rows)}")
    spans = rows["stream 1"]
    kernels = [e for e in spans if e["cat"] == "kernel"]
    expect(len(kernels) == len(launches),
           f"{len(kernels)} kernel spans for {len(launches)} launches")
    for k in kernels:
        expect(k["name"].startswith("matmul_"), f"kernel span named '{k['name']}'")
        expect(len(k["args"]["grid"]) == 3 and len(k["args"]["block"]) == 3,
               f"kernel span without geometry: {k}")
    copies = [e for e in spans if e["cat"] == "copy"]
    expect(any(e["name"] == "copy device to host" for e in copies), "no device-to-host copy")
    expect(all(e["args"]["bytes"] > 0 for e in copies), "a copy without its byte count")
    if same_clock:
        for call, span in zip(launches, kernels):
            expect(span["ts"] + EPS_US >= call["ts"],
                   f"a kernel starts at {span['ts']} us, before hal_launch at {call['ts']} us")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", required=True, choices=["workload", "matmul", "unwritable"])
    parser.add_argument("--trace", required=True)
    parser.add_argument("--same-clock", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no program to run")

    if os.path.exists(args.trace):
        os.remove(args.trace)
    env = dict(os.environ, HAL_TRACE=args.trace)
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode == 77:
        print("check_trace: skipped (no device to run on)")
        return 77
    try:
        expect(run.returncode == 0, f"{command[0]} exited with {run.returncode}")
        if args.expect == "unwritable":
            expect("HAL_TRACE: cannot write the trace" in run.stderr,
                   "the log does not say that the trace file cannot be written")
            expect(not os.path.exists(args.trace), "a trace file appeared anyway")
        else:
            events = load(args.trace)
            check = check_workload if args.expect == "workload" else check_matmul
            check(events, args.same_clock)
    except (Failure, OSError, ValueError) as e:
        print(f"check_trace: FAIL: {e}")
        return 1
    print(f"check_trace: PASS ({args.expect})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
