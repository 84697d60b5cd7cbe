#!/usr/bin/env python3
"""report.py — the figures of a `make fuzz` run, from libFuzzer's logs.

For each harness: executions and exec/s (libFuzzer's -print_final_stats),
coverage (cov: edges and ft: features of the last status line), corpus size,
peak RSS, crash inputs left in the crashes directory. Writes OUT.json and its
Markdown twin OUT.md. Standard library only."""
import argparse
import datetime
import json
import os
import re
import sys


def parse_log(path):
    stats, last = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"stat::(\w+):\s+(\d+)", line)
            if m:
                stats[m.group(1)] = int(m.group(2))
                continue
            m = re.match(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)(?: corp: (\d+)/)?", line)
            if m:
                last = {"cov": int(m.group(2)), "ft": int(m.group(3))}
                if m.group(4):
                    last["corpus"] = int(m.group(4))
    return stats, last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--crashes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    crash_files = sorted(os.listdir(a.crashes)) if os.path.isdir(a.crashes) else []
    rows = []
    for name in a.names:
        log = os.path.join(a.logs, name + ".log")
        stats, last = parse_log(log) if os.path.exists(log) else ({}, {})
        crashes = [c for c in crash_files if c.startswith(name + "-")]
        rows.append({
            "harness": name,
            "seconds": a.seconds,
            "executions": stats.get("number_of_executed_units"),
            "exec_per_sec": stats.get("average_exec_per_sec"),
            "cov": last.get("cov"),
            "ft": last.get("ft"),
            "corpus": last.get("corpus"),
            "new_units": stats.get("new_units_added"),
            "peak_rss_mb": stats.get("peak_rss_mb"),
            "crashes": len(crashes),
            "crash_files": crashes,
        })
    doc = {
        "what": "libFuzzer (clang -fsanitize=fuzzer,address,undefined) over glue's parsers of untrusted bytes; "
                "make fuzz FUZZ_SECONDS=%d" % a.seconds,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds_per_harness": a.seconds,
        "harnesses": rows,
        "total_executions": sum(r["executions"] or 0 for r in rows),
        "total_crashes": sum(r["crashes"] for r in rows),
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    fmt = lambda v: "-" if v is None else str(v)
    lines = [
        "# Fuzzing figures",
        "",
        "%s, %s. %d s per harness (0 = the seed inputs once each); `cov` = edges covered, `ft` = libFuzzer "
        "features, both from the last status line." % (doc["what"], doc["date"], a.seconds),
        "",
        "| harness | executions | exec/s | cov | ft | corpus | crashes |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %d |" % (
            r["harness"], fmt(r["executions"]), fmt(r["exec_per_sec"]), fmt(r["cov"]), fmt(r["ft"]),
            fmt(r["corpus"]), r["crashes"]))
    lines += ["", "Total: %d executions, %d crashes." % (doc["total_executions"], doc["total_crashes"]), ""]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines))
    print("fuzz: %d executions over %d harnesses, %d crashes -> %s.json, %s.md" % (
        doc["total_executions"], len(rows), doc["total_crashes"], a.out, a.out))
    return 1 if doc["total_crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
