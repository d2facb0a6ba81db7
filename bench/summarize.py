#!/usr/bin/env python3
"""Prints the comparison tables of one bench/compare.sh run as Markdown.

Reads OUT/runs.jsonl (one `tabula bench` run per line, tagged with the label
compare.sh gave it), OUT/redis-*.csv (redis-benchmark --csv) and OUT/machine.txt,
and prints each comparison with its target and PASS or MISS. Sections whose runs
are absent are left out.
"""

import csv
import json
import os
import re
import sys

# The Bigtable paper (OSDI 2006), Figure 6: values read or written per second by
# one tablet server, 1000-byte values.
BIGTABLE_PAPER = [
    ("randread", "random reads", 1212),
    ("randread-mem", "random reads (mem)", 10811),
    ("randwrite", "random writes", 8850),
    ("seqread", "sequential reads", 4425),
    ("seqwrite", "sequential writes", 8547),
    ("scan", "scans", 15385),
]


def load_runs(out):
    runs = []
    path = os.path.join(out, "runs.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            runs = [json.loads(line) for line in f if line.strip()]
    return runs


def find(runs, label, workload):
    """The run of `workload` labelled `label`; of several (rounds), the one with the
    median throughput (the lower middle of an even count)."""
    matches = [r for r in runs if r.get("label") == label and r.get("workload") == workload]
    if not matches:
        return None
    matches.sort(key=lambda r: r.get("ops_per_sec", 0))
    return matches[(len(matches) - 1) // 2]


def load_redis(out, name):
    path = os.path.join(out, "redis-%s.csv" % name)
    if not os.path.exists(path):
        return {}
    rates = {}
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) >= 2 and row[0] != "test":
                try:
                    rates[row[0]] = float(row[1])
                except ValueError:
                    pass
    return rates


def verdict(ok):
    return "PASS" if ok else "MISS"


def fmt(x):
    return "{:,.0f}".format(x)


def p99_ms(run):
    return max((o["p99_us"] for o in run["ops"]), default=0) / 1000.0


def section_ceiling(runs):
    null_get = find(runs, "ceiling-null", "randread")
    null_put = find(runs, "ceiling-null", "randwrite")
    get = find(runs, "ceiling-tabula", "randread")
    put = find(runs, "ceiling-tabula", "randwrite")
    put_sync = find(runs, "ceiling-tabula-sync", "randwrite")
    if not (null_get and get):
        return []
    lines = [
        "### RPC ceiling (`tabula serve --null-backend`)",
        "",
        "| operation | ceiling ops/s | Tabula ops/s | ratio | target | |",
        "|---|---:|---:|---:|---:|---|",
    ]
    rows = [("get (randread)", null_get, get, True), ("put, writeToWAL=false", null_put, put, True)]
    rows.append(("put, sync commit log", null_put, put_sync, False))
    for name, ceiling, tabula, targeted in rows:
        if not (ceiling and tabula):
            continue
        ratio = tabula["ops_per_sec"] / ceiling["ops_per_sec"]
        target = ">= 0.70" if targeted else "(fsync-bound)"
        mark = verdict(ratio >= 0.70) if targeted else ""
        lines.append(
            "| %s | %s | %s | %.2fx | %s | %s |"
            % (name, fmt(ceiling["ops_per_sec"]), fmt(tabula["ops_per_sec"]), ratio, target, mark)
        )
    return lines + [""]


def section_redis(runs, out):
    always = load_redis(out, "always")
    default = load_redis(out, "default")
    sync_put = find(runs, "redis-tabula-sync", "randwrite")
    put = find(runs, "redis-tabula-nowal", "randwrite")
    get = find(runs, "redis-tabula-nowal", "randread")
    if not (always or default):
        return []
    lines = [
        "### Redis (redis-benchmark, same connections, value size and key space)",
        "",
        "| pairing | Redis ops/s | Tabula ops/s | ratio | target | |",
        "|---|---:|---:|---:|---:|---|",
    ]
    pairs = [
        ("SET, appendfsync always / put, sync commit log", always.get("SET"), sync_put),
        ("SET, default config / put, writeToWAL=false", default.get("SET"), put),
        ("GET, default config / get", default.get("GET"), get),
    ]
    for name, redis, tabula in pairs:
        if not (redis and tabula):
            continue
        ratio = tabula["ops_per_sec"] / redis
        lines.append(
            "| %s | %s | %s | %.2fx | >= 0.50 | %s |"
            % (name, fmt(redis), fmt(tabula["ops_per_sec"]), ratio, verdict(ratio >= 0.5))
        )
    return lines + [""]


# Rows per mutateRows call of the buffered write runs and per getRowsWithColumns
# call of the batched read runs (bench/compare.sh).
BUFFERED_ROWS = 100


def paper_row(what, paper, run):
    """One row of the Bigtable table: Tabula's run beside the paper's figure."""
    rate = run["units_per_sec"]
    times = rate / paper
    return "| %s | %s | %s | %.1fx | >= 10x %s | %.2f |" % (
        what, fmt(paper), fmt(rate), times, verdict(times >= 10), p99_ms(run))


def section_bigtable(runs):
    present = [(w, n, f, find(runs, "bigtable", w)) for (w, n, f) in BIGTABLE_PAPER]
    if not any(r for (_, _, _, r) in present):
        return []
    lines = [
        "### The Bigtable paper's single-tablet-server figures (values/s, 1000-byte values)",
        "",
        "| workload | paper | Tabula | Tabula / paper | target | p99 ms |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for workload, name, paper, run in present:
        if run:
            lines.append(paper_row("%s (`%s`)" % (name, workload), paper, run))
    # The writes again through a client-side write buffer (mutateRows of
    # BUFFERED_ROWS rows, synced commit log), as HBase's PerformanceEvaluation
    # writes by default, and the random reads as multi-gets of as many rows (its
    # --multiGet).
    for workload, name, paper in BIGTABLE_PAPER:
        run = find(runs, "bigtable-buffered", workload)
        if run:
            call = "getRowsWithColumns" if "read" in workload else "mutateRows"
            how = "batched" if "read" in workload else "buffered"
            what = "%s, %s (`%s`, %d-row %s)" % (name, how, workload, BUFFERED_ROWS, call)
            lines.append(paper_row(what, paper, run))
    # The one-row writes against a server with log_fsync = false (a synced write
    # waits for the log's write to the OS, HBase's default hflush).
    for workload, name, paper in BIGTABLE_PAPER:
        run = find(runs, "bigtable-hflush", workload)
        if run:
            what = "%s, log written to the OS (`%s`, `log_fsync = false`)" % (name, workload)
            lines.append(paper_row(what, paper, run))
    return lines + [""]


def section_versions(runs):
    asof = find(runs, "versions", "versions-asof")
    one = find(runs, "versions", "versions-one")
    if not (asof and one):
        return []
    ratio = asof["ops_per_sec"] / one["ops_per_sec"]
    return [
        "### Time dimension (over Thrift)",
        "",
        "| run | ops/s | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
        "| as-of-T gets, cell with %s versions | %s | %.2f | %.2f |"
        % (fmt(asof["records"]), fmt(asof["ops_per_sec"]), asof["ops"][0]["p50_us"] / 1000.0, p99_ms(asof)),
        "| gets of a one-version cell | %s | %.2f | %.2f |"
        % (fmt(one["ops_per_sec"]), one["ops"][0]["p50_us"] / 1000.0, p99_ms(one)),
        "",
        "as-of-T / one-version: %.2fx (target >= 0.50, i.e. within 2x): %s" % (ratio, verdict(ratio >= 0.5)),
        "",
    ]


# The filtered scans of bench/compare.sh's filters section: label, description.
FILTERED_SCANS = [
    ("ranges", "MultiRowRangeFilter, four 20-row ranges"),
    ("fuzzy", "FuzzyRowFilter, three free digits"),
    ("prefix", "PrefixFilter, one 10,000-row prefix"),
]


def section_filters(runs):
    lines = []
    for kind, name in FILTERED_SCANS:
        hinted = find(runs, "filters-%s" % kind, "scan")
        every = find(runs, "filters-%s-every-row" % kind, "scan")
        if not (hinted and every and hinted["ops"] and every["ops"]):
            continue
        h, e = hinted["ops"][0], every["ops"][0]
        if not (h["count"] and e["count"]):
            continue
        lines.append(
            "| %s | %s | %s | %.2f | %.2f | %.0fx |"
            % (
                name,
                fmt(h["units"] / h["count"]),
                fmt(hinted["records"]),
                h["mean_us"] / 1000.0,
                e["mean_us"] / 1000.0,
                e["mean_us"] / max(h["mean_us"], 1),
            )
        )
    if not lines:
        return []
    header = [
        "### Filtered whole-table scans (skip hints)",
        "",
        "| filter | rows kept | table rows | ms per scan | ms, every row shown | saved |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    return header + lines + [""]


def section_counters(runs, out):
    direct = find(runs, "counters-direct", "counters")
    coalesced = find(runs, "counters-coalesced", "counters")
    if not (direct and coalesced and direct["ops"] and coalesced["ops"]):
        return []
    lines = [
        "### Hot counters (Thrift1 increment, zipfian rows)",
        "",
        "| server | calls/s | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
    ]
    for name, run in (("each call applied before it answers", direct), ("coalesced", coalesced)):
        lines.append(
            "| %s | %s | %.2f | %.2f |"
            % (name, fmt(run["ops_per_sec"]), run["ops"][0]["p50_us"] / 1000.0, p99_ms(run))
        )
    summary = "coalesced / applied per call: %.2fx" % (coalesced["ops_per_sec"] / direct["ops_per_sec"])
    drain = os.path.join(out, "counters-drain.txt")
    if os.path.exists(drain):
        summary += "; the coalesced calls were all applied %s s after the last answer" % open(drain).read().strip()
    return lines + ["", summary, ""]


TRANSPORTS = [
    ("buffered, binary", "transports-buffered"),
    ("framed, binary", "transports-framed"),
    ("framed, compact", "transports-framed-compact"),
    ("HTTP (HBase's HTTP mode)", "transports-http"),
    ("HTTPS (TLS on the port)", "transports-https"),
]


def section_transports(runs):
    base_get = find(runs, "transports-buffered", "randread")
    base_put = find(runs, "transports-buffered", "randwrite")
    if not (base_get and base_put):
        return []
    lines = [
        "### Transports (point gets and unsynced one-row puts, cached rows)",
        "",
        "| transport | gets/s | p99 ms | of buffered | puts/s | p99 ms | of buffered |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label in TRANSPORTS:
        get = find(runs, label, "randread")
        put = find(runs, label, "randwrite")
        if not (get and put):
            continue
        lines.append(
            "| %s | %s | %.2f | %.2fx | %s | %.2f | %.2fx |"
            % (
                name,
                fmt(get["ops_per_sec"]),
                p99_ms(get),
                get["ops_per_sec"] / base_get["ops_per_sec"],
                fmt(put["ops_per_sec"]),
                p99_ms(put),
                put["ops_per_sec"] / base_put["ops_per_sec"],
            )
        )
    return lines + [""]


def section_scale(runs):
    sizes = sorted(
        {int(m.group(1)) for r in runs for m in [re.match(r"scale-(\d+)$", r.get("label", ""))] if m}
    )
    if len(sizes) < 2:
        return []
    small, large = sizes[0], sizes[-1]
    lines = [
        "### Scale (%s rows vs %s rows)" % (fmt(small), fmt(large)),
        "",
        "| workload | %s rows | %s rows | drop | target | |" % (fmt(small), fmt(large)),
        "|---|---:|---:|---:|---:|---|",
    ]
    for workload in ("randread", "randwrite"):
        a = find(runs, "scale-%d" % small, workload)
        b = find(runs, "scale-%d" % large, workload)
        if not (a and b):
            continue
        drop = 1.0 - b["ops_per_sec"] / a["ops_per_sec"]
        lines.append(
            "| %s | %s | %s | %.0f%% | <= 30%% | %s |"
            % (workload, fmt(a["ops_per_sec"]), fmt(b["ops_per_sec"]), drop * 100, verdict(drop <= 0.30))
        )
    return lines + [""]


def section_memory(runs, out):
    budget_mb = None
    machine = os.path.join(out, "machine.txt")
    if os.path.exists(machine):
        m = re.search(r"MEMORY_BUDGET_MB=(\d+)", open(machine).read())
        if m:
            budget_mb = int(m.group(1))
    # Loads of the servers run with MEMORY_BUDGET_MB (ceiling and redis use a larger one).
    loads = [
        r
        for r in runs
        if r.get("workload") == "seqwrite"
        and r.get("server")
        and not r.get("label", "").startswith(("ceiling", "redis"))
    ]
    if not (budget_mb and loads):
        return []
    limit = budget_mb * 1.2
    lines = [
        "### Memory (server RSS while loading; budget %d MiB, limit budget + 20%% = %.0f MiB)" % (budget_mb, limit),
        "",
        "| load | rows | RSS max MiB | RSS mean MiB | CPU cores | |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in loads:
        s = r["server"]
        rss = s["rss_max_bytes"] / 1048576.0
        lines.append(
            "| %s | %s | %.0f | %.0f | %.2f | %s |"
            % (r["label"], fmt(r["records"]), rss, s["rss_mean_bytes"] / 1048576.0, s["cpu_cores_used"], verdict(rss <= limit))
        )
    return lines + [""]


def main():
    if len(sys.argv) != 2:
        print("usage: summarize.py OUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    runs = load_runs(out)
    lines = []
    machine = os.path.join(out, "machine.txt")
    if os.path.exists(machine):
        lines += ["```"] + open(machine).read().strip().splitlines() + ["```", ""]
    warnings = os.path.join(out, "warnings.txt")
    if os.path.exists(warnings):
        lines += ["Warnings (timed runs these precede may be slowed):", ""]
        lines += ["* " + w.lstrip("= ") for w in open(warnings).read().strip().splitlines()] + [""]
    lines += section_ceiling(runs)
    lines += section_redis(runs, out)
    lines += section_bigtable(runs)
    lines += section_versions(runs)
    lines += section_filters(runs)
    lines += section_counters(runs, out)
    lines += section_transports(runs)
    lines += section_scale(runs)
    lines += section_memory(runs, out)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
