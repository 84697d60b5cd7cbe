#!/usr/bin/env python3
"""campaign.py — a fuzzing campaign that runs in segments across sessions.

Each harness runs until it has made --target-execs executions or used
--target-cpu CPU seconds (libFuzzer + sanitizers are slow on some parsers),
whichever comes first, on a corpus that persists in STATE/corpus/NAME. Work
is done in segments of at most --segment seconds and at most --budget seconds
per invocation, so a campaign of many CPU-hours fits between other jobs and
survives the machine being taken away: every finished segment is one line of
the ledger (--ledger; executions, CPU seconds from the kernel's rusage, the
CPU model, coverage), and a stopped campaign loses at most the segment it was
in. Run it again to continue; harnesses that reached a target are skipped.

A crash stops that harness: its input stays in STATE/crashes/ and the harness
is skipped until the input is handled (the fix, the input in regressions/NAME,
a unit test) and removed from STATE/crashes/. SIGTERM/SIGINT end the running
segments cleanly (libFuzzer prints its statistics) and record them.

Writes OUT.json and OUT.md from the whole ledger. Standard library only."""
import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from report import parse_log  # noqa: E402  (one reading of libFuzzer's logs)

with open(os.path.join(HERE, "libfuzzer.flags")) as flags:   # shared with run.sh
    COMMON = flags.read().split()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            info = {}
            for line in f:
                if ":" in line:
                    k, v = line.split(":", 1)
                    info.setdefault(k.strip(), v.strip())
        return "%s (family %s model %s)" % (info.get("model name", "?"), info.get("cpu family", "?"),
                                            info.get("model", "?"))
    except OSError:
        return "unknown"


def build_commit(build):
    """The commit the harnesses in BUILD/fuzz were built from (make fuzz-bins writes it)."""
    try:
        with open(os.path.join(build, "fuzz", "COMMIT")) as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


def read_ledger(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    # A line cut by a stop mid-write: the segment is lost, nothing else.
                    print("campaign: %s:%d: unreadable line skipped" % (path, n), file=sys.stderr)
    return rows


def totals(rows, name):
    mine = [r for r in rows if r["harness"] == name]
    return {
        "segments": len(mine),
        "executions": sum(r["executions"] for r in mine),
        "cpu_seconds": sum(r["cpu_seconds"] for r in mine),
        "wall_seconds": sum(r["wall_seconds"] for r in mine),
        "crashes": sum(len(r["crash_files"]) for r in mine),
        "last": mine[-1] if mine else None,
        "cpus": sorted({r["cpu"] for r in mine}),
        # Segments from before the ledger recorded the build have none.
        "builds": sorted({r.get("build", "not recorded") for r in mine}),
    }


class Campaign:
    def __init__(self, a):
        self.a = a
        self.ledger = a.ledger
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.children = set()
        self.deadline = time.monotonic() + a.budget
        self.cpu = cpu_model()
        self.build = build_commit(a.build)
        for sub in ("corpus", "crashes", "logs"):
            os.makedirs(os.path.join(a.state, sub), exist_ok=True)

    def open_crashes(self, name):
        d = os.path.join(self.a.state, "crashes")
        return sorted(f for f in os.listdir(d) if f.startswith(name + "-"))

    def remaining(self, name):
        """(executions, CPU seconds) still to do, or None when a target is met."""
        t = totals(read_ledger(self.ledger), name)
        if t["executions"] >= self.a.target_execs or t["cpu_seconds"] >= self.a.target_cpu:
            return None
        return self.a.target_execs - t["executions"], self.a.target_cpu - t["cpu_seconds"]

    def segment(self, name):
        """Runs one segment of NAME; False when NAME has nothing more to do now."""
        if self.open_crashes(name):
            print("campaign: %s skipped: open crash inputs in %s/crashes (fix, move to "
                  "tests/fuzz/regressions/%s, delete)" % (name, self.a.state, name))
            return False
        left = self.remaining(name)
        if left is None:
            return False
        execs, cpu = left
        # At least 10 s: a harness a few CPU seconds short of its hour (a
        # segment cut by wall time) would otherwise never finish.
        seconds = int(min(self.a.segment, max(cpu + 1, 10), self.deadline - time.monotonic()))
        if seconds < 5:
            return False
        work = os.path.join(self.a.state, "corpus", name)
        os.makedirs(work, exist_ok=True)
        log = os.path.join(self.a.state, "logs", "%s.log" % name)
        dirs = [work, os.path.join(HERE, "corpus", name)]
        if os.path.isdir(os.path.join(HERE, "regressions", name)):
            dirs.append(os.path.join(HERE, "regressions", name))
        cmd = ["nice", "-n", str(self.a.nice), os.path.join(self.a.build, "fuzz", name)] + COMMON + [
            "-artifact_prefix=%s/crashes/%s-" % (self.a.state, name),
            "-runs=%d" % execs, "-max_total_time=%d" % seconds] + dirs
        start = time.monotonic()
        with open(log, "w") as out:
            child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
            with self.lock:
                self.children.add(child)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            with self.lock:
                self.children.discard(child)
        stats, last = parse_log(log)
        if "number_of_executed_units" not in stats:
            # Killed before libFuzzer could print its statistics: nothing to count.
            print("campaign: %s: no final statistics (exit %d), segment not counted; see %s" % (
                name, child.returncode, log), file=sys.stderr)
            return False
        row = {
            "harness": name,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": self.cpu,
            "build": self.build,
            "wall_seconds": round(time.monotonic() - start, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "executions": stats["number_of_executed_units"],
            "exec_per_sec": stats.get("average_exec_per_sec"),
            "cov": last.get("cov"), "ft": last.get("ft"), "corpus": last.get("corpus"),
            "new_units": stats.get("new_units_added"), "peak_rss_mb": stats.get("peak_rss_mb"),
            "exit": child.returncode,
            "crash_files": self.open_crashes(name),
        }
        with self.lock:
            with open(self.ledger, "a") as f:
                f.write(json.dumps(row) + "\n")
                f.flush()
                os.fsync(f.fileno())
        print("campaign: %s: %d executions in %.0f CPU s (%s/s), cov %s, corpus %s%s" % (
            name, row["executions"], row["cpu_seconds"], row["exec_per_sec"], row["cov"], row["corpus"],
            ", CRASH: %s" % " ".join(row["crash_files"]) if row["crash_files"] else ""), flush=True)
        return not row["crash_files"]

    def worker(self, queue):
        while not self.stop.is_set() and time.monotonic() < self.deadline - 5:
            with self.lock:
                if not queue:
                    return
                name = queue.pop(0)
            # Segments of one harness follow each other until its target is met.
            while not self.stop.is_set() and self.segment(name):
                pass

    def run(self, names):
        def on_signal(signum, _frame):
            self.stop.set()
            with self.lock:
                for c in self.children:
                    c.send_signal(signal.SIGINT)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        queue = list(names)
        threads = [threading.Thread(target=self.worker, args=(queue,)) for _ in range(self.a.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)


def report(a, names):
    rows = read_ledger(a.ledger)
    crash_dir = os.path.join(a.state, "crashes")
    crash_files = sorted(os.listdir(crash_dir)) if os.path.isdir(crash_dir) else []
    out = []
    for name in names:
        t = totals(rows, name)
        last = t["last"] or {}
        out.append({
            "harness": name,
            "segments": t["segments"],
            "executions": t["executions"],
            "cpu_seconds": round(t["cpu_seconds"], 1),
            "exec_per_sec": round(t["executions"] / t["cpu_seconds"]) if t["cpu_seconds"] else None,
            "cov": last.get("cov"), "ft": last.get("ft"), "corpus": last.get("corpus"),
            "target_met": t["executions"] >= a.target_execs or t["cpu_seconds"] >= a.target_cpu,
            "crashes_found": t["crashes"],
            "open_crashes": [c for c in crash_files if c.startswith(name + "-")],
            "cpus": t["cpus"],
            "builds": t["builds"],
        })
    doc = {
        "what": "libFuzzer campaign (clang -fsanitize=fuzzer,address,undefined), make fuzz-campaign: each harness "
                "until %d executions or %d CPU seconds, in segments on a persistent corpus" % (
                    a.target_execs, a.target_cpu),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "target_executions": a.target_execs,
        "target_cpu_seconds": a.target_cpu,
        "harnesses": out,
        "total_executions": sum(r["executions"] for r in out),
        "total_cpu_seconds": round(sum(r["cpu_seconds"] for r in out), 1),
        "total_crashes_found": sum(r["crashes_found"] for r in out),
        "open_crashes": sum(len(r["open_crashes"]) for r in out),
        "complete": all(r["target_met"] for r in out),
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    tmp = a.out + ".json.tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, a.out + ".json")
    fmt = lambda v: "-" if v is None else str(v)
    lines = [
        "# Fuzzing campaign",
        "",
        "%s. Figures summed over the segments (%s); exec/s = executions per CPU second; `cov` = edges, "
        "`ft` = libFuzzer features, of the last segment. Written by tests/fuzz/campaign.py on %s." % (
            doc["what"], os.path.basename(a.ledger), doc["date"]),
        "",
        "| harness | executions | CPU s | exec/s | cov | ft | corpus | segments | target met | crashes found / open | CPU | build |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    for r in out:
        lines.append("| %s | %d | %.0f | %s | %s | %s | %s | %d | %s | %d / %d | %s | %s |" % (
            r["harness"], r["executions"], r["cpu_seconds"], fmt(r["exec_per_sec"]), fmt(r["cov"]), fmt(r["ft"]),
            fmt(r["corpus"]), r["segments"], "yes" if r["target_met"] else "no", r["crashes_found"],
            len(r["open_crashes"]),
            "; ".join(r["cpus"]) or "-", ", ".join(r["builds"]) or "-"))
    lines += ["", "Total: %d executions in %.1f CPU hours; %d crashes found, %d open; campaign %s." % (
        doc["total_executions"], doc["total_cpu_seconds"] / 3600, doc["total_crashes_found"], doc["open_crashes"],
        "complete" if doc["complete"] else "not complete (run make fuzz-campaign again to continue)"), ""]
    with open(a.out + ".md.tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(a.out + ".md.tmp", a.out + ".md")
    print("campaign: %d executions, %.2f CPU h, %d crashes found, %d open, %s -> %s.json, %s.md" % (
        doc["total_executions"], doc["total_cpu_seconds"] / 3600, doc["total_crashes_found"], doc["open_crashes"],
        "complete" if doc["complete"] else "not complete", a.out, a.out))
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the fuzz build directory (BUILD/fuzz/NAME)")
    ap.add_argument("--state", required=True, help="corpora, ledger, logs, crash inputs (kept between runs)")
    ap.add_argument("--ledger", help="one line per finished segment (default STATE/ledger.jsonl); "
                    "make fuzz-campaign keeps it next to OUT, committed, so the figures outlive the machine")
    ap.add_argument("--budget", type=int, default=3600, help="wall seconds for this invocation")
    ap.add_argument("--segment", type=int, default=600, help="wall seconds per segment at most")
    ap.add_argument("--jobs", type=int, default=1, help="harnesses run at once")
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--target-execs", type=int, default=10_000_000)
    ap.add_argument("--target-cpu", type=int, default=3600)
    ap.add_argument("--report-only", action="store_true", help="write OUT from the ledger, run nothing")
    ap.add_argument("--out", required=True, help="OUT.json and OUT.md")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    a.ledger = a.ledger or os.path.join(a.state, "ledger.jsonl")
    if not a.report_only:
        missing = [n for n in a.names if not shutil.which(os.path.join(a.build, "fuzz", n))]
        if missing:
            print("campaign: not built: %s (make fuzz-build)" % " ".join(missing), file=sys.stderr)
            return 2
        Campaign(a).run(a.names)
    doc = report(a, a.names)
    return 1 if doc["open_crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
