#!/bin/sh
# run.sh — libglue's tests (`make lib-test`, `make tsan`):
#   run.sh DIR GLUE_BIN              DIR/prefix holds an installed glue (make install)
#   run.sh DIR GLUE_BIN --tsan BIN   BIN: tests/lib/threads.c built with ThreadSanitizer
# Trains a one-epoch run of every model the binary has (the models its
# unknown-model message names, so a new one is covered) on a small dataset, and a
# pair run; then checks the installed library (SONAME, only glue_* exported,
# pkg-config, the man page), builds examples/predict.c against it (shared and
# static) and runs it, runs the threads test, and the Python binding against
# `glue predict --json` with /usr/bin/python3. Any failure exits non-zero.
set -eu
dir=$1 glue=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$dir/runs" "$dir/data"   # a scratch folder of this script's
mkdir -p "$dir/data"
cd "$dir"
export GLUE_RUNS="$dir/runs" GLUE_RESULTS="$dir/results"

# Weather sentences: sunny/warm words say "fine", cold/wet ones "bad".
/usr/bin/python3 - <<'EOF'
import random
rng = random.Random(7)
good, bad = ["sunny", "warm", "bright", "clear", "mild"], ["cold", "wet", "stormy", "icy", "grey"]
with open("data/days.tsv", "w") as f, open("data/pairs.tsv", "w") as g:
    f.write("text\tlabel\n")
    g.write("text_a\ttext_b\tlabel\n")
    for i in range(80):
        y = i % 2
        w = rng.sample(good if y else bad, 2)
        f.write("the %s day was %s\t%s\n" % (w[0], w[1], "fine" if y else "bad"))
        v = rng.sample(good if y else bad, 1)
        g.write("it was %s\tthe sky was %s\t%s\n" % (w[0], v[0], "same" if y else "other"))
EOF

quick() {
    case $1 in
        bert) echo "--init $top/models/bert-tiny-wiki --max-len 32 --batch 16" ;;
        fasttext) echo "--set bucket=10000 --set dim=16" ;;
    esac
}
if [ "${3:-}" = --tsan ]; then models="fasttext textcnn bert"; else
    models=$("$glue" finetune sst2 --model '?' 2>&1 | sed -n 's/.*models built into this binary: //p' | tr -d ',')
fi
runs=""
for m in $models; do
    # shellcheck disable=SC2046
    "$glue" finetune --train data/days.tsv --dev data/days.tsv --model "$m" --out "runs/days-$m" --epochs 1 \
        --threads 1 $(quick "$m") > "runs-$m.log" 2>&1 || { cat "runs-$m.log"; exit 1; }
    runs="$runs $dir/runs/days-$m"
done
"$glue" finetune --train data/pairs.tsv --dev data/pairs.tsv --model textcnn --out runs/pairs-textcnn --epochs 1 \
    --threads 1 > runs-pairs.log 2>&1 || { cat runs-pairs.log; exit 1; }
runs="$runs $dir/runs/pairs-textcnn"
# A GLUE task's run (the task from results.json), a regression on pairs: STS-B.
data=${GLUE_DATA:-${GLUE_SHARED:-$top/../shared}/data/glue}
if [ -d "$data/STS-B" ]; then
    GLUE_DATA=$data "$glue" finetune stsb --model fasttext --out runs/stsb-fasttext --epochs 1 --threads 1 \
        $(quick fasttext) > runs-stsb.log 2>&1 || { cat runs-stsb.log; exit 1; }
    runs="$runs $dir/runs/stsb-fasttext"
else
    echo "lib-test: no STS-B under $data: no GLUE task's run tested"
fi
echo "lib-test: trained $models, a pair run and a GLUE task's"

if [ "${3:-}" = --tsan ]; then
    # shellcheck disable=SC2086
    GLUE_TEST_OMP_THREADS=2 TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1" "$4" $runs
    echo "tsan: no ThreadSanitizer reports"
    exit 0
fi

prefix=$dir/prefix
so=$(cd "$prefix/lib" && ls libglue.so.*)
readelf -d "$prefix/lib/$so" | grep -q "SONAME.*\[$so\]" || { echo "lib-test: $so has no SONAME $so"; exit 1; }
others=$(nm -D --defined-only "$prefix/lib/$so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^glue_/ && $3 !~ /^_/ {print $3}')
[ -z "$others" ] || { echo "lib-test: $so exports more than glue_*: $others"; exit 1; }
grep -q '^\.TH GLUE 1' "$prefix/share/man/man1/glue.1" && grep -q 'finetune' "$prefix/share/man/man1/glue.1"
[ -x "$prefix/bin/glue" ] && [ -f "$prefix/include/glue.h" ] && [ -f "$prefix/lib/libglue.a" ]
# The installed glue in a folder that is not the repository: BERT fine-tunes from the shipped encoder and
# translate uses the shipped model, both from PREFIX/share/glue (it refused: "run glue from the repository's
# top folder"); the run records the encoder by its portable name, not the installed path.
[ ! -e models ] || { echo "lib-test: $dir holds a models folder: not outside the repository"; exit 1; }
"$prefix/bin/glue" finetune --train data/days.tsv --dev data/days.tsv --model bert --out runs/installed-bert \
    --epochs 1 --threads 1 --max-len 32 --batch 16 > installed-bert.log 2>&1 || { cat installed-bert.log; exit 1; }
grep -q '"file":[[:space:]]*"models/electra-mini-wiki' runs/installed-bert/results.json &&
    ! grep -q "$prefix" runs/installed-bert/results.json ||
    { echo "lib-test: the installed glue's run does not name the shipped encoder portably"; exit 1; }
de=$("$prefix/bin/glue" translate "A man is riding a bicycle." 2>&1) && [ -n "$de" ] ||
    { echo "lib-test: the installed glue did not translate: $de"; exit 1; }
echo "lib-test: the installed glue fine-tunes BERT and translates outside the repository"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$top/examples/predict.c" -o predict $(pkg-config --cflags --libs glue) -Wl,-rpath,"$prefix/lib"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$top/examples/predict.c" -o predict-static $(pkg-config --cflags glue) \
    "$prefix/lib/libglue.a" $(pkg-config --static --libs glue | sed 's/-lglue / /')
for bin in ./predict ./predict-static; do
    out=$($bin runs/days-textcnn "the sunny day was warm" "a cold wet morning")
    echo "$out" | awk -F'\t' 'NF != 3 || ($1 != "fine" && $1 != "bad") {exit 1}' || { echo "$bin: $out"; exit 1; }
    $bin runs/pairs-textcnn "it was sunny	the sky was clear" | grep -Eq '^(same|other)	' || exit 1
    if $bin /nonexistent "x" 2> err.txt; then echo "$bin: opened a missing run"; exit 1; fi
    grep -q "/nonexistent" err.txt
done
echo "lib-test: example (shared and static, pkg-config) ok"
# shellcheck disable=SC2046
cc -std=c11 -O1 "$top/tests/lib/threads.c" -o threads $(pkg-config --cflags --libs glue) -lpthread -Wl,-rpath,"$prefix/lib"
# shellcheck disable=SC2086
./threads $runs 2> threads.err || { cat threads.err; exit 1; }
# It failed on purpose (a missing run, invalid UTF-8): the library printed nothing.
[ ! -s threads.err ] || { echo "lib-test: the library printed:"; cat threads.err; exit 1; }
GLUE_LIB="$prefix/lib/$so" /usr/bin/python3 "$top/tests/lib/test_binding.py" "$glue" $runs
