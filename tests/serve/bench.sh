#!/bin/sh
# bench.sh — `glue serve` under load on loopback (`make bench-serve`):
#   bench.sh GLUE_BIN RUN_DIR RESULTS [SECONDS]
# RUN_DIR is a single-text run (make bench-serve: runs/sst2/bert, the shipped
# encoder fine-tuned on SST-2 by `make run`). The texts are SST-2's dev
# sentences. First `glue predict --run RUN_DIR` over all of them offline
# (examples/s, the model's load time subtracted; the median of 3), then wrk
# (Debian's) with 1, 8 and 64 connections, 3 runs of SECONDS each (default 10)
# per level, against `glue serve`, one sentence per request: requests/s
# (= examples/s; the median run) and that run's p50/p99 latency.
# Writes RESULTS/bench/<cpu>/serve_bench.{json,md}, naming the CPU and the
# machine's load (the numbers mean little on a busy machine: run it on a quiet
# one).
set -eu
glue=$1 run=$2 out=$3 secs=${4:-10}
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v wrk >/dev/null || { echo "bench-serve: wrk is missing: apt-get install wrk"; exit 1; }
data=${GLUE_DATA:-${GLUE_SHARED:-$top/../shared}/data/glue}
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
pid=
zcat -f "$data/SST-2/dev.tsv"* | tail -n +2 | cut -f1 > "$tmp/texts"
n=$(wc -l < "$tmp/texts")
load=$(cat /proc/loadavg)

# The middle of three numbers (one per line on stdin).
median3() { sort -g | sed -n 2p; }

# Offline: all texts in one process, minus the time of one text (loading); the median of three.
offline=$(for _ in 1 2 3; do
    t0=$(date +%s.%N); head -1 "$tmp/texts" | "$glue" predict --run "$run" > /dev/null; t1=$(date +%s.%N)
    "$glue" predict --run "$run" < "$tmp/texts" > /dev/null; t2=$(date +%s.%N)
    echo "$n / (($t2 - $t1) - ($t1 - $t0))" | bc -l
done | median3)

# The request bodies, one sentence each, in turn.
/usr/bin/python3 - "$tmp/texts" "$tmp/bodies.lua" <<'EOF'
import json, sys
texts = open(sys.argv[1], encoding="utf-8").read().splitlines()
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write("wrk.method = 'POST'\nwrk.headers['Content-Type'] = 'application/json'\nlocal bodies = {\n")
    for t in texts:
        f.write("  %s,\n" % json.dumps(json.dumps({"texts": [t]})))
    f.write("}\nlocal i = 0\nrequest = function()\n  i = i % #bodies + 1\n"
            "  return wrk.format(nil, '/v1/predict', nil, bodies[i])\nend\n")
EOF

"$glue" serve --run "$run" --port 0 --max-batch 64 --max-wait-ms 5 2> "$tmp/serve.err" &
pid=$!
for _ in $(seq 50); do grep -q "http://" "$tmp/serve.err" 2>/dev/null && break; sleep 0.2; done
port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/serve.err")
[ -n "$port" ] || { cat "$tmp/serve.err"; exit 1; }
rows=""
for c in 1 8 64; do
    t=$([ $c -lt 2 ] && echo 1 || echo 2)
    # Three runs; the one with the median requests/s gives the row (its latencies too).
    for r in 1 2 3; do
        wrk -t$t -c$c -d${secs}s --latency -s "$tmp/bodies.lua" "http://127.0.0.1:$port" > "$tmp/wrk-$c-$r.txt"
        echo "$(awk '/^Requests\/sec/ {print $2}' "$tmp/wrk-$c-$r.txt") $r"
    done | sort -g | sed -n 2p > "$tmp/mid"
    cp "$tmp/wrk-$c-$(cut -d' ' -f2 "$tmp/mid").txt" "$tmp/wrk-$c.txt"
    rps=$(awk '/^Requests\/sec/ {print $2}' "$tmp/wrk-$c.txt")
    p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk-$c.txt")
    p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk-$c.txt")
    bad=$(awk '/Non-2xx|Socket errors/ {print}' "$tmp/wrk-$c.txt" | tr '\n' ' ')
    rows="$rows$c $rps $p50 $p99 ${bad:-none}
"
done
kill -TERM $pid; wait $pid; pid=
cpu=$("$glue" --version | sed -n 's/^cpu: //p')
/usr/bin/python3 - "$out" "$run" "$n" "$offline" "$secs" "$load" "$(nproc)" "$cpu" <<EOF
import json, os, re, sys
root, run, n, offline, secs, load, cores, cpu = sys.argv[1:]
slug = "-".join(w.lower() for w in re.findall(r"[A-Za-z0-9]+", cpu))
os.makedirs(os.path.join(root, "bench", slug), exist_ok=True)
out = os.path.join(root, "bench", slug, "serve_bench")
rows = []
for line in """$rows""".strip().splitlines():
    c, rps, p50, p99, errors = line.split(" ", 4)
    rows.append({"connections": int(c), "requests_per_sec": float(rps), "p50": p50, "p99": p99, "errors": errors.strip()})
res = {"benchmark": "serve", "run": run, "cpu": cpu, "texts": int(n), "offline_examples_per_sec": round(float(offline), 1), "seconds_per_level": int(secs),
       "load_average_before": load, "cores": int(cores), "levels": rows,
       "ratio_at_64": round(rows[-1]["requests_per_sec"] / float(offline), 3)}
json.dump(res, open(out + ".json", "w"), indent=1)
with open(out + ".md", "w") as f:
    f.write("glue serve on loopback, %s, one SST-2 dev sentence per request, the median of 3 wrk runs of %s s per level (offline: of 3 runs); CPU %s, "
            "load average before: %s on %s cores\n\n" % (run, secs, cpu, load, cores))
    f.write("| connections | requests/s | p50 | p99 | errors |\n|---|---|---|---|---|\n")
    for r in rows:
        f.write("| %d | %.1f | %s | %s | %s |\n" % (r["connections"], r["requests_per_sec"], r["p50"], r["p99"], r["errors"]))
    f.write("\noffline glue predict --run: %.1f examples/s; at 64 connections the server reaches %.0f%% of it\n"
            % (float(offline), 100 * res["ratio_at_64"]))
print(open(out + ".md").read())
EOF
