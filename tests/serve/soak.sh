#!/bin/sh
# soak.sh — `glue serve` held under load on loopback for minutes (`make soak-serve`):
#   soak.sh GLUE_BIN RUN_DIR RESULTS [SECONDS] [CONNECTIONS]
# wrk (Debian's) with CONNECTIONS (default 32) connections for SECONDS
# (default 600), one SST-2 dev sentence per request, and every 50th request
# a bad one (cycling through malformed JSON, a wrong type, an empty list, an
# unknown field's wrong value). One connection per wrk thread, so that each
# response is matched to the request it answers: a good request must get
# 200, a bad one 400; anything else is counted as an error. The server's
# resident memory is sampled every 5 s from /proc; the mean of the first
# minute is held against the mean of the last. Writes
# RESULTS/bench/<cpu>/serve_soak.{json,md} (naming the CPU and the load before
# the start); exits non-zero when the soak failed.
set -eu
glue=$1 run=$2 out=$3 secs=${4:-600} conns=${5:-32}
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v wrk >/dev/null || { echo "soak-serve: wrk is missing: apt-get install wrk"; exit 1; }
data=${GLUE_DATA:-${GLUE_SHARED:-$top/../shared}/data/glue}
tmp=$(mktemp -d)
pid= sampler=
trap 'kill $pid $sampler 2>/dev/null || true; rm -rf "$tmp"' EXIT
zcat -f "$data/SST-2/dev.tsv"* | tail -n +2 | cut -f1 > "$tmp/texts"
load=$(cat /proc/loadavg)

/usr/bin/python3 - "$tmp/texts" "$tmp/soak.lua" <<'EOF'
import json, sys
texts = open(sys.argv[1], encoding="utf-8").read().splitlines()
bad = ['{"texts": ["unterminated', '{"texts": 5}', '{"texts": []}', '{"texts": [7]}', 'not json at all']
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write("wrk.method = 'POST'\nwrk.headers['Content-Type'] = 'application/json'\nlocal good = {\n")
    for t in texts:
        f.write("  %s,\n" % json.dumps(json.dumps({"texts": [t]})))
    f.write("}\nlocal bad = {\n")
    for b in bad:
        f.write("  %s,\n" % json.dumps(b))
    f.write("""}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  i, last_bad, good_ok, good_err, bad_400, bad_other = 0, false, 0, 0, 0, 0
end
function request()
  i = i + 1
  last_bad = (i % 50 == 0)
  if last_bad then
    return wrk.format(nil, '/v1/predict', nil, bad[(i / 50) % #bad + 1])
  end
  return wrk.format(nil, '/v1/predict', nil, good[i % #good + 1])
end
function response(status, headers, body)
  if last_bad then
    if status == 400 then bad_400 = bad_400 + 1 else bad_other = bad_other + 1 end
  else
    if status == 200 then good_ok = good_ok + 1 else good_err = good_err + 1 end
  end
end
function done(summary, latency, requests)
  local t = {0, 0, 0, 0}
  for _, th in ipairs(threads) do
    t[1] = t[1] + th:get("good_ok"); t[2] = t[2] + th:get("good_err")
    t[3] = t[3] + th:get("bad_400"); t[4] = t[4] + th:get("bad_other")
  end
  io.write(string.format("SOAK good_ok=%d good_err=%d bad_400=%d bad_other=%d socket_errors=%d\\n", t[1], t[2], t[3], t[4],
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
""")
EOF

"$glue" serve --run "$run" --port 0 --max-batch 64 --max-wait-ms 5 2> "$tmp/serve.err" &
pid=$!
for _ in $(seq 50); do grep -q "http://" "$tmp/serve.err" 2>/dev/null && break; sleep 0.2; done
port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/serve.err")
[ -n "$port" ] || { cat "$tmp/serve.err"; exit 1; }
(t=0; while kill -0 $pid 2>/dev/null; do
     echo "$t $(awk '/^VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null)" >> "$tmp/rss"; sleep 5; t=$((t + 5)); done) &
sampler=$!
wrk -t"$conns" -c"$conns" -d"${secs}s" --timeout 10s --latency -s "$tmp/soak.lua" "http://127.0.0.1:$port" > "$tmp/wrk.txt"
kill $sampler 2>/dev/null; sampler=
kill -TERM $pid; wait $pid; pid=
cat "$tmp/wrk.txt"
cpu=$("$glue" --version | sed -n 's/^cpu: //p')
/usr/bin/python3 - "$out" "$run" "$secs" "$conns" "$load" "$(nproc)" "$cpu" "$tmp/wrk.txt" "$tmp/rss" <<'EOF'
import json, re, sys
import os
root, run, secs, conns, load, cores, cpu, wrk_txt, rss_txt = sys.argv[1:]
slug = "-".join(w.lower() for w in re.findall(r"[A-Za-z0-9]+", cpu))
os.makedirs(os.path.join(root, "bench", slug), exist_ok=True)
out = os.path.join(root, "bench", slug, "serve_soak")
wrk = open(wrk_txt).read()
soak = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", wrk.split("SOAK", 1)[1]))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1))
lat = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", wrk, re.M))
rss = [(int(t), int(k)) for t, k in (l.split() for l in open(rss_txt) if len(l.split()) == 2)]
first = [k for t, k in rss if t < 60]
last = [k for t, k in rss if t >= rss[-1][0] - 55]
mf, ml = sum(first) / len(first), sum(last) / len(last)
res = {"benchmark": "serve_soak", "run": run, "cpu": cpu, "cores": int(cores), "load_average_before": load,
       "seconds": int(secs), "connections": int(conns), "bad_every": 50, "requests_per_sec": rps,
       "p50": lat.get("50"), "p99": lat.get("99"), **soak,
       "rss_kib_first_minute": round(mf), "rss_kib_last_minute": round(ml),
       "rss_change": round(ml / mf - 1, 4), "rss_samples": rss,
       "passed": soak["good_err"] == 0 and soak["bad_other"] == 0 and soak["socket_errors"] == 0 and abs(ml / mf - 1) <= 0.05}
json.dump(res, open(out + ".json", "w"), indent=1)
with open(out + ".md", "w") as f:
    f.write("glue serve soak on loopback: %s, %s s at %s connections, every 50th request a bad one; CPU %s "
            "(%s cores), load average before: %s\n\n" % (res["run"], secs, conns, cpu, cores, load))
    f.write("| requests/s | p50 | p99 | good: 200 | good: not 200 | bad: 400 | bad: other | socket errors |"
            " RSS first minute (MiB) | RSS last minute (MiB) | change |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    f.write("| %.1f | %s | %s | %d | %d | %d | %d | %d | %.1f | %.1f | %+.1f%% |\n" % (
        rps, res["p50"], res["p99"], soak["good_ok"], soak["good_err"], soak["bad_400"], soak["bad_other"],
        soak["socket_errors"], mf / 1024, ml / 1024, 100 * res["rss_change"]))
    f.write("\n%s: no error on a good request, every bad one refused with 400, resident memory %s\n" % (
        "passed" if res["passed"] else "FAILED", "flat (within 5%)" if abs(ml / mf - 1) <= 0.05 else "NOT flat"))
print(open(out + ".md").read())
sys.exit(0 if res["passed"] else 1)
EOF
