#!/bin/sh
# run.sh BUILD SECONDS OUT NAME... — runs each libFuzzer harness BUILD/fuzz/NAME
# for SECONDS (nice'd: the machine is shared) on a working copy of its seeds
# (tests/fuzz/corpus/NAME is never modified: new inputs go to BUILD/corpus/NAME),
# or with SECONDS = 0 runs each seed once. Writes OUT.json and OUT.md
# (tests/fuzz/report.py) and exits non-zero when any harness crashed; crash
# inputs are kept in BUILD/crashes/.
set -u
build=$1 seconds=$2 out=$3
shift 3
names="$*"
logs=$build/logs
mkdir -p "$logs" "$build/crashes"
status=0
# libFuzzer's flags, shared with campaign.py. -close_fd_mask=3: the parsers'
# own messages would drown the log and slow the fuzzer; libFuzzer keeps its own output.
common=$(cat tests/fuzz/libfuzzer.flags)
for name in $names; do
    seeds=tests/fuzz/corpus/$name
    # Inputs that once crashed it (each with its fix and a unit test).
    regressions=
    [ -d tests/fuzz/regressions/$name ] && regressions=tests/fuzz/regressions/$name
    work=$build/corpus/$name
    log=$logs/$name.log
    mkdir -p "$work"
    rm -f "$build/crashes/$name-"*
    if [ "$seconds" -gt 0 ]; then
        nice -n 10 "$build/fuzz/$name" $common -artifact_prefix="$build/crashes/$name-" \
            -max_total_time="$seconds" "$work" "$seeds" $regressions >"$log" 2>&1
    else
        "$build/fuzz/$name" $common -artifact_prefix="$build/crashes/$name-" -runs=0 "$seeds" $regressions >"$log" 2>&1
    fi
    rc=$?
    if [ $rc -ne 0 ]; then
        status=1
        echo "fuzz: $name FAILED (exit $rc), see $log" >&2
        tail -n 30 "$log" >&2
    else
        echo "fuzz: $name ok"
    fi
done
python3 tests/fuzz/report.py --seconds "$seconds" --logs "$logs" --crashes "$build/crashes" --out "$out" $names ||
    status=1
exit $status
