#!/usr/bin/env python3
"""Draw one devrt trace (docs/runtime.md, "Tracing") as docs/trace.png shows it: the
launches, the server's requests and sleeps, exceptions, and the output counter.

    trace_picture.py TRACE.json OUT.png

Needs matplotlib; Perfetto (ui.perfetto.dev) and chrome://tracing open the JSON itself.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(source, out):
    with open(source, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    timed = [e for e in events if e["ph"] != "M"]
    origin = min(e["ts"] for e in timed)

    def ms(t):
        return (t - origin) / 1000.0

    rows = {"launch": 2, "request": 1, "server": 0}
    colors = {"launch": "#4c72b0", "request": "#dd8452", "server": "#b0b0b0"}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 3.6), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    # The launch and a margin: the server's sleeps before and after it run to the close.
    launches = [e for e in timed if e.get("cat") == "launch"]
    first = min(ms(e["ts"]) for e in launches)
    last = max(ms(e["ts"] + e["dur"]) for e in launches)
    margin = (last - first) * 0.15
    for e in timed:
        if e["ph"] != "X" or e.get("cat") not in rows:
            continue
        row = rows[e["cat"]]
        # A request takes microseconds: drawn a few pixels wide, or it would not show.
        width = max(e["dur"] / 1000.0, (last - first) / 250)
        top.barh(row, width, left=ms(e["ts"]), height=0.6, color=colors[e["cat"]],
                 edgecolor="none")
        if e["cat"] == "launch":
            top.text(ms(e["ts"]), row + 0.4, e["name"], fontsize=8, va="bottom")
    for e in timed:
        if e.get("cat") == "exception":
            top.plot(ms(e["ts"]), rows["launch"], marker="v", color="#c44e52", markersize=9)
            top.text(ms(e["ts"]), rows["launch"] - 0.55, "exception", fontsize=8,
                     color="#c44e52", ha="right", va="top")
    top.set_xlim(first - margin, last + margin)
    top.set_yticks([0, 1, 2])
    top.set_yticklabels(["server: sleeps", "server: requests", "launches"], fontsize=8)
    top.set_ylim(-0.6, 3)
    top.set_title("devrt trace: print_then_raise on the emulation (devrt-run --trace)", fontsize=9)
    counter = sorted((e for e in timed if e.get("cat") == "output"), key=lambda e: e["ts"])
    xs = [ms(e["ts"]) for e in counter]
    ys = [e["args"]["units"] for e in counter]
    bottom.step([0.0] + xs, [0] + ys, where="post", color="#55a868")
    bottom.set_ylabel("output units", fontsize=8)
    bottom.set_xlabel("ms since the trace began", fontsize=8)
    for axis in (top, bottom):
        axis.tick_params(labelsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
