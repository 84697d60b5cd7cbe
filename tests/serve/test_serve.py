"""test_serve.py — `glue serve` from the outside (tests only; run by
tests/test_serve.c with /usr/bin/python3): `test_serve.py GLUE_BIN SINGLE_RUN PAIR_RUN`.

Starts the server on a free loopback port with small limits and checks: the
endpoints (/healthz, /v1/models, /v1/predict for texts and pairs, whose
probabilities equal `glue predict --json`'s, /metrics), every bad request
class (400 with what was wrong, 404, 405, 413), concurrent requests batched
and answered as alone, a full queue (503), a client that never finishes its
headers (dropped after --timeout while others are answered), and SIGTERM:
the request in flight is answered, new connections are refused, exit 0.
Prints one line per check; any failure raises."""
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

GLUE, SINGLE, PAIR = sys.argv[1], sys.argv[2], sys.argv[3]
TIMEOUT_S = 2
proc = port = None


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def start():
    global proc, port
    proc = subprocess.Popen([GLUE, "serve", "--run", "days=" + SINGLE, "--run", "pairs=" + PAIR, "--port", "0",
                             "--threads", "1", "--timeout", str(TIMEOUT_S), "--max-body", "4096", "--max-text", "100",
                             "--max-texts", "8", "--max-pending", "8", "--max-batch", "64", "--max-wait-ms", "30"],
                            stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert "http://127.0.0.1:" in line, line
    port = int(line.split("127.0.0.1:")[1].split("/")[0])


def request(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheader("Content-Type"), data


def predict(obj, raw=None):
    status, ctype, data = request("POST", "/v1/predict", raw if raw is not None else json.dumps(obj).encode())
    assert ctype == "application/json", ctype
    return status, json.loads(data)


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError("%s: %s" % (name, detail))
    print("ok  %s" % name)


def endpoints():
    status, _, data = request("GET", "/healthz")
    check("healthz", status == 200 and json.loads(data) == {"status": "ok"}, data)
    status, _, data = request("GET", "/v1/models")
    models = {m["model"]: m for m in json.loads(data)["models"]}
    check("models", status == 200 and set(models) == {"days", "pairs"} and models["pairs"]["pair"]
          and len(models["days"]["labels"]) == 2 and models["days"]["version"].startswith("crc32:"), data)
    texts = ["the sunny day was warm", "a cold wet morning", "grey"]
    status, out = predict({"texts": texts, "model": "days"})
    cli = subprocess.run([GLUE, "predict", "--run", SINGLE, "--json"], input="\n".join(texts) + "\n",
                         capture_output=True, text=True, check=True).stdout
    cli = json.loads(cli)["predictions"]
    same = all(p["label"] == q["label"] and all(f32(p["probabilities"][k]) == f32(v) for k, v in q["probabilities"].items())
               for p, q in zip(out["predictions"], cli))
    check("predict texts = glue predict --json", status == 200 and out["model"] == "days" and out["kind"]
          and len(out["predictions"]) == 3 and same, (out, cli))
    status, out = predict({"pairs": [["it was sunny", "the sky was clear"], ["it was icy", "grey"]], "model": "pairs"})
    check("predict pairs", status == 200 and len(out["predictions"]) == 2
          and abs(sum(out["predictions"][0]["probabilities"].values()) - 1) < 1e-5, out)


def bad_requests():
    cases = [
        ("malformed JSON", None, b'{"texts": ["a"', 400, "malformed JSON"),
        ("not an object", ["a"], None, 400, "JSON object"),
        ("texts not a list", {"texts": "a", "model": "days"}, None, 400, "expected an array"),
        ("a text not a string", {"texts": ["a", 3], "model": "days"}, None, 400, "texts[1]: expected a string"),
        ("empty list", {"texts": [], "model": "days"}, None, 400, "empty list"),
        ("empty text", {"texts": [""], "model": "days"}, None, 400, "empty text"),
        ("invalid UTF-8", None, b'{"texts": ["ok", "\xff\xfe"], "model": "days"}', 400, "texts[1]: invalid UTF-8"),
        ("both texts and pairs", {"texts": ["a"], "pairs": [["a", "b"]], "model": "days"}, None, 400, "one of"),
        ("unknown key", {"text": ["a"], "model": "days"}, None, 400, "unknown or repeated key"),
        ("no model among several", {"texts": ["a"]}, None, 400, "several models"),
        ("unknown model", {"texts": ["a"], "model": "nope"}, None, 404, "no model named"),
        ("pairs to a single-text model", {"pairs": [["a", "b"]], "model": "days"}, None, 400, "single texts"),
        ("a pair of three", {"pairs": [["a", "b", "c"]], "model": "pairs"}, None, 400, "pairs[0]"),
        ("text too long", {"texts": ["a" * 101], "model": "days"}, None, 413, "limit of 100"),
        ("too many texts", {"texts": ["a"] * 9, "model": "days"}, None, 413, "limit of 8"),
        ("body too large", None, b" " * 5000, 413, "more than 4096"),
    ]
    for name, obj, raw, code, says in cases:
        status, out = predict(obj, raw)
        check("%d %s" % (code, name), status == code and out.get("status") == code and says in out.get("error", ""),
              (status, out))
    status, _, data = request("GET", "/v1/predict")
    check("405 GET /v1/predict", status == 405 and json.loads(data)["status"] == 405, data)
    status, _, data = request("GET", "/nowhere")
    check("404 unknown path", status == 404, data)


def concurrent():
    texts = ["the warm sun came out", "rain all day", "icy hills", "a mild clear noon", "grey", "bright"]
    alone = [predict({"texts": [t], "model": "days"})[1]["predictions"][0] for t in texts]
    before = metrics_value("glue_batch_size_count")
    results = [None] * len(texts)
    time.sleep(0.1)   # idle for longer than --max-wait-ms: the first request waits for others (batcher.h)

    def one(i):
        results[i] = predict({"texts": [texts[i]], "model": "days"})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    batches = metrics_value("glue_batch_size_count") - before
    check("6 concurrent requests answered as alone", all(r[0] == 200 and r[1]["predictions"][0] == a
                                                         for r, a in zip(results, alone)), results)
    check("... in fewer batches than requests (%d)" % batches, 1 <= batches < len(texts), batches)


def queue_full():
    results = []

    def one():
        results.append(predict({"texts": ["a warm day"] * 8, "model": "days"}))

    threads = [threading.Thread(target=one) for _ in range(12)]
    time.sleep(0.1)   # idle: the first request waits --max-wait-ms for a full batch, and the queue fills
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r[0] for r in results)
    check("503 when more than --max-pending texts wait (codes %s)" % codes,
          200 in codes and 503 in codes and set(codes) <= {200, 503}
          and all("try again" in r[1]["error"] for r in results if r[0] == 503), results)


def slow_client():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/predict HTTP/1.1\r\nHost: x\r\n")   # never finishes its headers
    t0 = time.time()
    status, _ = predict({"texts": ["a warm day"], "model": "days"})
    check("others answered while a client stalls", status == 200 and time.time() - t0 < 1.5)
    s.settimeout(TIMEOUT_S + 5)
    got = s.recv(100)
    check("the stalled client is dropped after --timeout (%.1f s)" % (time.time() - t0),
          got == b"" and time.time() - t0 < TIMEOUT_S + 4, got)
    s.close()


def metrics_value(name):
    status, ctype, data = request("GET", "/metrics")
    assert status == 200 and ctype.startswith("text/plain"), (status, ctype)
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("%s not in /metrics" % name)


def metrics():
    text = request("GET", "/metrics")[2].decode()
    for want in ('glue_requests_total{endpoint="/v1/predict",code="400"}', 'glue_requests_total{endpoint="/v1/predict",code="413"}',
                 'glue_requests_total{endpoint="/v1/predict",code="503"}', "glue_request_duration_seconds_bucket{le=\"+Inf\"}",
                 "glue_batch_size_bucket", "glue_pending_texts 0", "glue_request_errors_total"):
        check("metrics has %s" % want, want in text, text)


def sigterm_drain():
    body = json.dumps({"texts": ["the sunny day was warm"], "model": "days"}).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
              % len(body) + body[:5])
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        refused = False
    except OSError:
        refused = True
    s.sendall(body[5:])
    s.settimeout(10)
    reply = b""
    while b"predictions" not in reply:
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    s.close()
    check("SIGTERM: the request in flight is answered", reply.startswith(b"HTTP/1.1 200") and b"predictions" in reply, reply)
    check("SIGTERM: new connections are refused", refused)
    rc = proc.wait(timeout=20)
    check("SIGTERM: exit 0", rc == 0, rc)


def main():
    start()
    try:
        endpoints()
        bad_requests()
        concurrent()
        queue_full()
        slow_client()
        metrics()
        sigterm_drain()
    finally:
        if proc.poll() is None:
            proc.kill()
    print("serve: all checks passed")


if __name__ == "__main__":
    main()
