#!/usr/bin/env python3
"""Run a program that uses libdevrt with its trace on (or off) and check the trace it
writes (docs/runtime.md, "Tracing") against what the program did.

    trace_check.py --status N --trace FILE --via option|environment|off
                   [--kernel NAME] [--raises] [--heap] [--sleeps] [--min-flushes N]
                   [--launches N --raised M --tracks K]
                   -- COMMAND [ARG]...

--via option: COMMAND names FILE itself (devrt-run --trace FILE); environment: the checker
sets DEVRT_TRACE=FILE; off: DEVRT_TRACE is unset and no FILE may be written. FILE is
removed before COMMAND runs. The exit status must be N exactly. Exits 0 when every check
passes, 1 saying which failed.

The checks: the file is JSON of Chrome's trace-event format ({"traceEvents": [...],
"otherData": {...}}), nothing dropped, every record written; one launch of KERNEL; every
request and output event of the server inside the launch's span; the server's events one
after another (one thread); the output counter's units and bytes those of COMMAND's
standard output; an exception event exactly when --raises, inside the launch, after the
requests; with --heap, heap_grow requests and a growing heap counter; with --sleeps, a
sleep of the server on its doorbell.

With --launches, COMMAND is a program of several launches on several streams (not
devrt-run): N launch events on K tracks, each id once, M of them raised, each with its
exception instant at its end, and every request inside some launch.
"""
import argparse
import json
import os
import subprocess
import sys

# ts and dur are printed to the nanosecond: a span's end, their sum, may be off by 1 ns.
SLACK_US = 0.002


def fail(why):
    print(f"trace_check.py: {why}", file=sys.stderr)
    sys.exit(1)


def end(event):
    return event["ts"] + event.get("dur", 0)


def check_format(trace):
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail('not {"traceEvents": [...]}')
    for event in trace["traceEvents"]:
        for key in ("name", "ph", "pid", "tid"):
            if key not in event:
                fail(f"an event without {key!r}: {event}")
        if event["ph"] != "M" and not isinstance(event.get("ts"), (int, float)):
            fail(f"an event without a time: {event}")
        if event["ph"] == "X" and not (isinstance(event.get("dur"), (int, float)) and
                                       event["dur"] >= 0):
            fail(f"a complete event without a duration: {event}")
        if event["ph"] not in ("M", "X", "i", "C"):
            fail(f"an event of phase {event['ph']!r}")
    other = trace.get("otherData", {})
    if other.get("dropped") != 0:
        fail(f"dropped {other.get('dropped')} events")
    recorded = [e for e in trace["traceEvents"] if e["ph"] != "M"]
    if other.get("written") != len(recorded):
        fail(f"otherData says {other.get('written')} written, the array has {len(recorded)}")
    names = {(e["tid"], e["args"]["name"]) for e in trace["traceEvents"] if e["ph"] == "M"}
    for expected in ((1, "launches"), (2, "server")):
        if expected not in names:
            fail(f"no metadata naming track {expected[0]} {expected[1]!r}")
    return other


def check_launches(trace, args):
    other = check_format(trace)
    events = trace["traceEvents"]
    launches = [e for e in events if e.get("cat") == "launch"]
    exceptions = [e for e in events if e.get("cat") == "exception"]
    raised = [e for e in launches if e["args"]["status"] == "exception"]
    tracks = {e["tid"] for e in launches}
    ids = [e["args"]["launch"] for e in launches if e["args"]["launch"]]
    if len(launches) != args.launches or len(raised) != args.raised:
        fail(f"{len(launches)} launches, {len(raised)} raised; expected {args.launches}, "
             f"{args.raised}")
    if len(tracks) != args.tracks:
        fail(f"launches on tracks {sorted(tracks)}, expected {args.tracks} tracks")
    if len(ids) != len(set(ids)):
        fail(f"a launch id twice: {sorted(ids)}")
    if len(exceptions) != len(raised):
        fail(f"{len(exceptions)} exception events for {len(raised)} raised launches")
    for x in exceptions:
        owner = [e for e in raised if e["args"]["launch"] == x["args"]["launch"] and
                 e["tid"] == x["tid"] and abs(end(e) - x["ts"]) <= SLACK_US]
        if len(owner) != 1:
            fail(f"an exception at no raised launch's end: {x}")
    for r in (e for e in events if e.get("cat") == "request"):
        if not any(e["ts"] - SLACK_US <= r["ts"] and end(r) <= end(e) + SLACK_US
                   for e in launches):
            fail(f"a request outside every launch: {r}")
    print(f"trace_check.py: {len(events)} events: {len(launches)} launches on "
          f"{len(tracks)} tracks, {len(raised)} raised, {other.get('flushes')} flushes")


def check(trace, args, stdout):
    other = check_format(trace)
    events = trace["traceEvents"]
    launches = [e for e in events if e.get("cat") == "launch"]
    if len(launches) != 1:
        fail(f"{len(launches)} launch events, expected 1")
    launch = launches[0]
    if launch["ph"] != "X" or launch["args"].get("kernel") != args.kernel:
        fail(f"the launch is not an X event of kernel {args.kernel}: {launch}")
    expected_status = "exception" if args.raises else "ok"
    if launch["args"].get("status") != expected_status:
        fail(f"the launch's status is {launch['args'].get('status')!r}, not {expected_status!r}")
    start, stop = launch["ts"] - SLACK_US, end(launch) + SLACK_US

    server = sorted((e for e in events if e["tid"] == 2 and e["ph"] == "X"),
                    key=lambda e: e["ts"])
    for before, after in zip(server, server[1:]):
        if end(before) > after["ts"] + SLACK_US:
            fail(f"the server's events overlap, one thread cannot: {before} and {after}")
    if args.sleeps and not any(e["name"] == "sleep" for e in server):
        fail("no sleep of the server on its doorbell")
    requests = [e for e in events if e.get("cat") == "request"]
    if not requests:
        fail("no request event")
    for r in requests:
        if r["ts"] < start or end(r) > stop:
            fail(f"a request outside the launch [{launch['ts']}, {end(launch)}]: {r}")
        if r["args"]["refused"]:
            fail(f"a refused request: {r}")
    counters = sorted((e for e in events if e.get("cat") == "output"), key=lambda e: e["ts"])
    for c in counters:
        if c["ts"] < start or c["ts"] > stop:
            fail(f"output outside the launch: {c}")
    units = sum(r["args"].get("units", 0) for r in requests)
    size = sum(r["args"].get("bytes", 0) for r in requests)
    lines = stdout.count(b"\n")
    if units != lines or size != len(stdout):
        fail(f"the requests wrote {units} units of {size} bytes; the program printed "
             f"{lines} lines of {len(stdout)} bytes")
    last = counters[-1]["args"] if counters else {"units": 0, "bytes": 0}
    if (last["units"], last["bytes"]) != (units, size):
        fail(f"the output counter ends at {last}, the requests wrote {units} units of {size} bytes")

    exceptions = [e for e in events if e.get("cat") == "exception"]
    if len(exceptions) != (1 if args.raises else 0):
        fail(f"{len(exceptions)} exception events, expected {1 if args.raises else 0}")
    for x in exceptions:
        if x["ph"] != "i" or not x["args"].get("report", "").startswith(f"kernel {args.kernel} "):
            fail(f"the exception is no instant with the report: {x}")
        if x["ts"] < start or x["ts"] > stop or any(end(r) > x["ts"] + SLACK_US for r in requests):
            fail(f"the exception is not at the launch's end, after its requests: {x}")

    if args.heap:
        grows = [r for r in requests if r["name"] == "heap_grow"]
        heap = sorted((e for e in events if e.get("cat") == "heap"), key=lambda e: e["ts"])
        if not grows or len(heap) < len(grows):
            fail(f"{len(grows)} heap_grow requests and {len(heap)} heap counter events")
        sizes = [h["args"]["reserved_bytes"] for h in heap]
        if sizes != sorted(sizes) or sizes[0] <= 0:
            fail(f"the heap counter is not the reserve of a growing heap: {sizes}")
    if other.get("flushes", 0) < args.min_flushes:
        fail(f"{other.get('flushes')} flushes of the buffer, expected at least {args.min_flushes}")
    print(f"trace_check.py: {len(events)} events: 1 launch, {len(requests)} requests, "
          f"{units} units of output, {len(exceptions)} exceptions, "
          f"{other.get('flushes')} flushes")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--status", type=int, required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--via", choices=("option", "environment", "off"), required=True)
    parser.add_argument("--kernel")
    parser.add_argument("--raises", action="store_true")
    parser.add_argument("--heap", action="store_true")
    # Only where the kernel makes the server sleep: a busy kernel may keep it awake.
    parser.add_argument("--sleeps", action="store_true")
    parser.add_argument("--min-flushes", type=int, default=1)
    parser.add_argument("--launches", type=int)
    parser.add_argument("--raised", type=int, default=0)
    parser.add_argument("--tracks", type=int, default=1)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no COMMAND")
    if os.path.exists(args.trace):
        os.remove(args.trace)
    env = dict(os.environ)
    env.pop("DEVRT_TRACE", None)
    if args.via == "environment":
        env["DEVRT_TRACE"] = args.trace
    run = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sys.stdout.buffer.write(run.stdout)
    sys.stderr.buffer.write(run.stderr)
    if run.returncode != args.status:
        fail(f"exit status {run.returncode}, expected {args.status}")
    if args.via == "off":
        if os.path.exists(args.trace):
            fail(f"the trace is off, yet {args.trace} was written")
        print("trace_check.py: no trace written, as expected")
        return 0
    try:
        with open(args.trace, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as error:
        fail(f"cannot read the trace: {error}")
    if args.launches is not None:
        check_launches(trace, args)
    else:
        check(trace, args, run.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
