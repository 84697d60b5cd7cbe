"""Reference .safetensors files for tests/test_safetensors.c, written and read by
hand with struct + json exactly as the format is specified
(https://github.com/huggingface/safetensors): the `safetensors` package is not
installed here, and the format is small enough to state in a few lines.

usage:
  safetensors_ref.py write DIR   writes DIR/ref.safetensors with F32, F16, BF16
                                 (plus an I64 buffer, a scalar and an empty
                                 tensor), header keys deliberately NOT sorted and
                                 data NOT in key order, and DIR/<name>.f32 holding
                                 each float tensor's exact f32 value.
  safetensors_ref.py check DIR   reads DIR/out.safetensors written by glue and
                                 checks it against the raw DIR/<name>.f32 files
                                 and the reference writer's layout rules.
"""
import json
import os
import struct
import sys

from torchref import np, torch


def bf16_bits(x):
    """float32 array -> bfloat16 bit patterns (torch rounds to nearest even)."""
    t = torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    return t.view(torch.int16).numpy().view(np.uint16)


def st_write(path, blobs, header_order=None, metadata=None, pretty=False):
    """Writes a .safetensors file. blobs: [(name, dtype, shape, raw bytes)] in
    DATA order; header_order: the order of the header keys ("__metadata__"
    among them when metadata is given), default data order with metadata first."""
    entries, at = {}, 0
    for name, dt, shape, raw in blobs:
        entries[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [at, at + len(raw)]}
        at += len(raw)
    if header_order is None:
        header_order = (["__metadata__"] if metadata is not None else []) + [b[0] for b in blobs]
    header = {k: (metadata if k == "__metadata__" else entries[k]) for k in header_order}
    text = (json.dumps(header) if pretty else json.dumps(header, separators=(",", ":"))).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, raw in blobs:
            f.write(raw)


def f32_blob(name, a):
    a = np.asarray(a, dtype=np.float32)
    return (name, "F32", a.shape, a.astype("<f4").tobytes())


def st_read(path):
    """name -> numpy array (F32/F16/BF16 as float32, integers as int64), and
    the metadata and the header's key order."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data, out = raw[8 + n:], {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        buf, shape = data[b:end], e["shape"]
        if e["dtype"] == "BF16":
            bits = np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16
            a = bits.view(np.float32)
        else:
            a = np.frombuffer(buf, dtype={"F32": "<f4", "F16": "<f2", "I64": "<i8"}[e["dtype"]])
        out[name] = a.reshape(shape).astype(np.float32 if e["dtype"] != "I64" else np.int64)
    return out, header.get("__metadata__"), list(header.keys())


def write(d):
    rng = np.random.default_rng(1234)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = (rng.standard_normal((4, 5)) * 100).astype(np.float16)
    b[0, 0] = np.float16(6.1e-5)      # subnormal-adjacent and special values
    b[0, 1] = np.float16(-0.0)
    b[0, 2] = np.float16(65504.0)
    b[0, 3] = np.float16(5.96e-8)     # smallest subnormal
    c_f32 = (rng.standard_normal(7) * 1e3).astype(np.float32)
    c = bf16_bits(c_f32)
    c_val = torch.from_numpy(c.view(np.int16).copy()).view(torch.bfloat16).float().numpy()
    s = np.array(3.5, dtype=np.float32)
    z = np.zeros((0, 3), dtype=np.float32)
    pos = np.arange(6, dtype=np.int64).reshape(1, 6)

    # (name, dtype, shape, bytes) in DATA order; the header lists them in another.
    blobs = [("c.bf16", "BF16", [7], c.astype("<u2").tobytes()),
             ("a.f32", "F32", [2, 3], a.astype("<f4").tobytes()),
             ("pos", "I64", [1, 6], pos.astype("<i8").tobytes()),
             ("z.empty", "F32", [0, 3], z.tobytes()),
             ("b.f16", "F16", [4, 5], b.astype("<f2").tobytes()),
             ("s.scalar", "F32", [], s.astype("<f4").tobytes())]
    st_write(os.path.join(d, "ref.safetensors"), blobs,
             header_order=["pos", "b.f16", "a.f32", "__metadata__", "s.scalar", "z.empty", "c.bf16"],
             metadata={"format": "pt", "note": "written by hand"}, pretty=True)
    for name, val in [("a.f32", a), ("b.f16", b.astype(np.float32)), ("c.bf16", c_val), ("s.scalar", s)]:
        val.astype("<f4").tofile(os.path.join(d, name + ".f32"))


def check(d):
    with open(os.path.join(d, "out.safetensors"), "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0, "header length %d is not a multiple of 8" % n
    text = raw[8:8 + n].decode("utf-8")
    assert text.rstrip(" ") == text.rstrip(), "padding must be spaces"
    header = json.loads(text)
    keys = list(header.keys())
    assert keys[0] == "__metadata__", keys
    assert keys[1:] == sorted(keys[1:]), "tensor keys not sorted: %s" % keys
    data = raw[8 + n:]
    at = 0
    for name in keys[1:]:
        e = header[name]
        assert e["dtype"] == "F32", e
        begin, end = e["data_offsets"]
        assert begin == at, "%s: data not in key order" % name
        at = end
        got = np.frombuffer(data[begin:end], dtype="<f4").reshape(e["shape"])
        want = np.fromfile(os.path.join(d, name + ".f32"), dtype="<f4").reshape(e["shape"])
        assert got.tobytes() == want.tobytes(), "%s differs" % name
    assert at == len(data), "trailing bytes"
    assert header["__metadata__"] == {"format": "pt", "source": "glue test"}, header["__metadata__"]
    print("ok %d tensors" % (len(keys) - 1))


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
