"""test_binding.py — the Python binding (bindings/python/glue.py) against
`glue predict --json` (tests only; run by tests/lib/run.sh with
/usr/bin/python3 and GLUE_LIB set): `test_binding.py GLUE_BIN RUN_DIR...`.
For every run: the same labels, the same predicted label and the same
probabilities as floats (cJSON prints a float's double to 15 significant
digits when that reads back within its epsilon, so the printed value is
compared after rounding to float32, the precision both sides compute in),
for single texts and pairs; then the errors: a missing run, invalid UTF-8, a wrong number of texts."""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
import glue  # noqa: E402

TEXTS = ["the day was sunny and warm", "a cold wet morning", "ok", "stormy and grey", "snow on the hills"]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def cli_predictions(glue_bin, run, lines):
    out = subprocess.run([glue_bin, "predict", "--run", run, "--json"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["predictions"]


def check_run(glue_bin, run):
    with glue.Model(run) as m:
        b = [TEXTS[(i + 1) % len(TEXTS)] for i in range(len(TEXTS))] if m.pair else None
        mine = m.predict(TEXTS, b)
        theirs = cli_predictions(glue_bin, run, ["%s\t%s" % (a, bb) for a, bb in zip(TEXTS, b)] if b else TEXTS)
        assert len(mine) == len(theirs) == len(TEXTS), (len(mine), len(theirs))
        for x, y in zip(mine, theirs):
            if m.regression:
                assert f32(x["score"]) == f32(y["score"]), (run, x, y)
                continue
            assert x["label"] == y["label"], (run, x, y)
            assert list(x["probabilities"]) == list(y["probabilities"]) == m.labels, (run, x, y)
            for label, p in y["probabilities"].items():
                assert f32(x["probabilities"][label]) == f32(p), (run, label, x["probabilities"][label], p)
        print("%s (%s, %s%s): %d predictions equal glue predict --json's" % (
            run, m.kind, m.task, ", pairs" if m.pair else "", len(mine)))
        try:
            m.predict([b"\xff bad"], [b"x"] if m.pair else None)
            raise AssertionError("invalid UTF-8 accepted")
        except glue.Error as e:
            assert e.status == 65 and "UTF-8" in str(e), (e.status, str(e))
        try:
            m.predict(TEXTS, None if m.pair else TEXTS)
            raise AssertionError("wrong texts_b accepted")
        except glue.Error as e:
            assert e.status == 2, e.status
        # A str alone was predicted character by character, an int crashed the process (a pointer),
        # a NUL cut its text: a TypeError, a TypeError, a data error.
        b1 = ["x"] if m.pair else None
        for bad, kind in (("a gripping film", TypeError), ([1, 2], TypeError), (["a\0b"], glue.Error)):
            try:
                m.predict(bad, b1 if isinstance(bad, list) and len(bad) == 1 else (["x", "y"] if m.pair else None))
                raise AssertionError("predict(%r) accepted" % (bad,))
            except kind as e:
                assert kind is TypeError or e.status == 65, (bad, e)


def main():
    glue_bin, runs = sys.argv[1], sys.argv[2:]
    assert runs
    for run in runs:
        check_run(glue_bin, run)
    try:
        glue.Model("/nonexistent/run")
        raise AssertionError("a missing run opened")
    except glue.Error as e:
        assert e.status == 74 and "/nonexistent/run" in str(e), (e.status, str(e))
    print("python binding: %d runs ok" % len(runs))


if __name__ == "__main__":
    main()
