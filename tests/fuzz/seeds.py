#!/usr/bin/env python3
"""seeds.py — writes the seed corpora tests/fuzz/corpus/<harness>/ (committed;
run again only to change them): a few small valid inputs per harness, in the
input layout its header comment describes, plus a few near misses. Task-file
seeds take the first rows of the GLUE files in ../shared/data/glue (or
$GLUE_SHARED/data/glue). Standard library only."""
import gzip
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("GLUE_SHARED") or os.path.join(HERE, "..", "..", "..", "shared")
SEP = b"\n#@#\n"
# (task dir, file) in the order of tasks/registry.c: fuzz_task_load's byte 0.
SPLITS = [("CoLA", "train.tsv"), ("CoLA", "dev.tsv"), ("CoLA", "test.tsv"), ("SST-2", "train.tsv"),
          ("SST-2", "dev.tsv"), ("SST-2", "test.tsv"), ("MRPC", "train.tsv"), ("MRPC", "dev.tsv"),
          ("MRPC", "test.tsv"), ("STS-B", "train.tsv"), ("STS-B", "dev.tsv"), ("STS-B", "test.tsv"),
          ("QQP", "train.tsv"), ("QQP", "dev.tsv"), ("QQP", "test.tsv"), ("MNLI", "train.tsv"),
          ("MNLI", "dev_matched.tsv"), ("MNLI", "dev_mismatched.tsv"), ("MNLI", "test_matched.tsv"),
          ("MNLI", "test_mismatched.tsv"), ("QNLI", "train.tsv"), ("QNLI", "dev.tsv"), ("QNLI", "test.tsv"),
          ("RTE", "train.tsv"), ("RTE", "dev.tsv"), ("RTE", "test.tsv"), ("WNLI", "train.tsv"),
          ("WNLI", "dev.tsv"), ("WNLI", "test.tsv"), ("diagnostic", "diagnostic.tsv"),
          ("goemotions", "train.tsv"), ("goemotions", "dev.tsv"), ("goemotions", "test.tsv")]   # EXTRA_TASKS
# Task order for fuzz_predictions' byte 0, with a valid prediction per task.
PRED_TASKS = ["0", "1", "1", "3.25", "1", "entailment", "not_entailment", "entailment", "1", "neutral"]


def put(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def head_rows(task_dir, file, n=6):
    for root in (os.path.join(SHARED, "data", "glue"), os.path.join(SHARED, "data"),
                 os.path.join(HERE, "..", "..", "data", "fixtures")):
        for name in (file + ".gz", file):
            p = os.path.join(root, task_dir, name)
            if os.path.exists(p):
                opener = gzip.open if name.endswith(".gz") else open
                with opener(p, "rb") as f:
                    return b"".join(f.readline() for _ in range(n))
    return None


def task_seeds():
    for k, (d, f) in enumerate(SPLITS):
        rows = head_rows(d, f)
        if rows is None:
            continue
        put("fuzz_task_load", "%02d_%s_%s" % (k, d, f), bytes([k, 0]) + rows)
        put("fuzz_task_load", "%02d_%s_%s_strict_gz" % (k, d, f), bytes([k, 3]) + rows)
    bad = head_rows("STS-B", "dev.tsv", 3)
    if bad:
        lines = bad.split(b"\n")
        put("fuzz_task_load", "10_stsb_bad_rows", bytes([10, 0]) + b"\n".join(
            [lines[0], lines[1].replace(b"\t", b"\t\t", 1), b" 1" + lines[2][1:], b"1\x00junk\tx"]))
    put("fuzz_task_load", "30_goemotions_bad_label_sets", bytes([30, 0]) + b"ok\t3,27\ta\nnone\t\tb\nempty\t3,,4\tc\n"
        b"twice\t5,5\td\nrange\t28\te\nname\tjoy\tf\nspaces\t 2 , 1 \tg\n")


# (harness, seed name, bytes) of the text-input harnesses.
TEXT_SEEDS = [
    ("fuzz_tokenizer", "pair", b"\x20Hello, World!\tthe cats unbelievable"),
    ("fuzz_tokenizer", "empty_pair", b"\x05\t"),
    ("fuzz_tokenizer", "unicode", b"\x40caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xff\xfe bad \x01\x7f ok"),
    ("fuzz_vocab", "bert", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\nthe\ncat\n,\n!\n"),
    ("fuzz_vocab", "dup_no_specials", b"a\na\n\n##b\r\nc\n"),
    ("fuzz_wordpiece_train", "text", b"\x02the cat sat on the mat\nthe cats ran\nunbelievable running\n"),
    ("fuzz_wordpiece_train", "cased_joins", b"\x0eThe Cat, the CAT. caf\xc3\xa9 \xe4\xb8\xad\n\n"),
    ("fuzz_bleu", "13a", b"\x00The cat sat on the mat.\nA dog!" + SEP + b"The cat sat on a mat.\nThe dog!"),
    ("fuzz_bleu", "none_lower", b"\x03the CAT\n\n" + SEP + b"The cat\nx\n"),
    ("fuzz_bleu", "two_refs", "\x02Größe: 5€.\n\nein Hund\n".encode() + SEP + "größe 5 €\nx\nein Hund\n".encode()
     + SEP + "Die Größe\n\nHund\n".encode()),
    ("fuzz_corpus", "text", b"\x00para one.\npara two.\n\nnext doc\n"),
    ("fuzz_corpus", "wikiextractor", b"\x01<doc id=\"1\" title=\"T\">\nT\n\nText one.\n</doc>\n"),
    ("fuzz_corpus", "brown", b"\x02The/at cat/nn ``/`` 1/2/cd ''/'' ./.\n"),
    ("fuzz_corpus", "wikitext", b"\x03 = Title = \n = = Sec = = \n 1 @,@ 000 @-@ a <unk> \n"),
    ("fuzz_corpus", "auto_wikitext_name", b"\x14 = T = \n x \n"),
    ("fuzz_corpus", "auto_wiki_doc", b"\x1c<doc id=\"2\">\nT\nbody\n</doc>\n"),
]


def text_seeds():
    for harness, name, data in TEXT_SEEDS:
        put(harness, name, data)


def pred_seeds():
    for k, v in enumerate(PRED_TASKS):
        put("fuzz_predictions", "task%d" % k, bytes([k]) + b"index\tprediction\n0\t%s\n1\t%s\n" % (v.encode(), v.encode()))
    put("fuzz_predictions", "stsb_huge", bytes([3]) + b"index\tprediction\n0\t1e308\n1\t-1e308\n2\t2.5\n")
    put("fuzz_predictions", "bom_nul", bytes([1]) + b"\xef\xbb\xbfindex\tprediction\n0\t1\x00x\n 1\t0\n")


def ckpt_records(config, tensors=(), blobs=()):
    js = json.dumps(config).encode()
    out = struct.pack("<BI", 1, len(js)) + js
    for name, shape, dtype in tensors:
        n = 1
        for s in shape:
            n *= s
        size = 4 if dtype == 0 else 2
        out += struct.pack("<BH", 2, len(name)) + name.encode() + struct.pack("<BB", dtype, len(shape))
        out += b"".join(struct.pack("<q", s) for s in shape) + bytes(range(n * size % 256)) * 0 + b"\x3f" * (n * size)
    for name, data in blobs:
        out += struct.pack("<BH", 3, len(name)) + name.encode() + struct.pack("<Q", len(data)) + data
    return out + b"\x00"


def ckpt_file(records, version=1):
    stored = zlib.compress(records, 1)
    head = struct.pack("<II", version, 40) + struct.pack("<QQ", len(stored), len(records))
    crc = zlib.crc32(head, zlib.crc32(stored))
    return b"GLUECKPT" + head + struct.pack("<II", crc, 0) + stored


def ckpt_seeds():
    bert = {"model": "bert", "bert": {"vocab_size": 8, "hidden_size": 16, "num_hidden_layers": 1,
                                      "num_attention_heads": 2, "intermediate_size": 32,
                                      "max_position_embeddings": 8},
            "heads": {"mlm": 0, "pooler": 1, "num_labels": 2}}
    s2s = {"model": "seq2seq", "config": {"vocab_size": 8, "d_model": 16, "heads": 2}}
    recs = [ckpt_records(bert, [("bert.embeddings.word_embeddings.weight", [8, 16], 0), ("b", [3], 1),
                                ("c", [2, 2], 2)], [("rng", b"\x01" * 32), ("empty", b"")]),
            ckpt_records(s2s, [("w", [4], 0)], [("progress", b'{"epoch":1}')]),
            ckpt_records({})]
    for i, r in enumerate(recs):
        put("fuzz_checkpoint", "raw%d" % i, b"\x00" + ckpt_file(r))
        put("fuzz_checkpoint", "wrapped%d" % i, b"\x01" + r)
    put("fuzz_checkpoint", "wrapped_truncated", b"\x01" + recs[0][:50])


def ft_records(config, tensors, blobs):
    """Checkpoint records with explicit tensor data: (name, shape, dtype, bytes)."""
    js = json.dumps(config).encode()
    out = struct.pack("<BI", 1, len(js)) + js
    for name, shape, dtype, data in tensors:
        out += struct.pack("<BH", 2, len(name)) + name.encode() + struct.pack("<BB", dtype, len(shape))
        out += b"".join(struct.pack("<q", s) for s in shape) + data
    for name, data in blobs:
        out += struct.pack("<BH", 3, len(name)) + name.encode() + struct.pack("<Q", len(data)) + data
    return out + b"\x00"


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def i8_codes(*v):
    """Centroid indices as stored: index - 128, signed bytes."""
    return struct.pack("<%db" % len(v), *[x - 128 for x in v])


def ft_seeds():
    """fastText checkpoints for fuzz_fasttext_ckpt: dim 4, three words and two
    bucket rows; fp32, and product quantized (fasttext_io_pq.c) with and
    without qnorm and qout. Byte 0: bit 0 wrapped, bits 1-2 the task (0 SST-2,
    2 STS-B)."""
    cfg = {"epochs": 1, "lr": 0.1, "batch": 1000, "dim": 4, "wordNgrams": 2, "minCount": 1, "minn": 0,
           "maxn": 0, "bucket": 1000, "loss": "softmax", "tokenizer": "basic", "threads": 1}
    words = [("</s>", 9), ("good", 3), ("film", 2)]
    V = len(words)
    blobs = [("seed", struct.pack("<Q", 7)), ("words", b"".join(w.encode() + b"\0" for w, _ in words)),
             ("counts", struct.pack("<3q", *[c for _, c in words])), ("label_count", struct.pack("<2q", 4, 5)),
             ("bucket_rows", struct.pack("<2i", V + 5, V + 917))]
    head = {"model": "fasttext", "task": "sst2", "num_labels": 2, "config": cfg}
    fp32 = [("wi_words", [V, 4], 0, f32(*[0.1 * i for i in range(V * 4)])),
            ("wi_buckets.0", [2, 4], 0, f32(*[-0.2 * i for i in range(8)])),
            ("wo", [2, 4], 0, f32(1, -1, 0.5, 0, -1, 1, -0.5, 0)), ("bias", [1], 0, f32(0))]
    n = V + 2   # kept rows: ksub = 5, two sub-vectors of 2
    pq = [("wi_codes", [n, 2], 3, i8_codes(0, 1, 2, 3, 4, 0, 1, 2, 3, 4)),
          ("wi_centroids", [5 * 4], 0, f32(*[0.05 * i - 0.4 for i in range(20)])),
          ("wi_norm_codes", [n], 3, i8_codes(4, 3, 2, 1, 0)), ("wi_norm_centroids", [5], 0, f32(1, 2, 0.5, 3, 0.1)),
          ("wo_codes", [2, 2], 3, i8_codes(0, 1, 1, 0)), ("wo_centroids", [2 * 4], 0, f32(1, -1, 0.5, 0, -1, 1, -0.5, 0)),
          ("wo_norm_codes", [2], 3, i8_codes(0, 1)), ("wo_norm_centroids", [2], 0, f32(1.5, 0.7)),
          ("bias", [1], 0, f32(0))]
    quant = {"method": "pq", "version": 1, "dsub": 2, "cutoff": 0, "qnorm": True, "qout": True, "retrain": False,
             "epoch": 5, "lr": 0.05}
    plain = dict(quant, qnorm=False, qout=False)
    pq_plain = [t for t in pq if "norm" not in t[0] and not t[0].startswith("wo_")]
    pq_plain.insert(2, ("wo", [2, 4], 0, f32(1, -1, 0.5, 0, -1, 1, -0.5, 0)))
    stsb = dict(head, task="stsb", num_labels=1, quantized=plain)
    cases = [("fp32", 0, ft_records(head, fp32, blobs)),
             ("pq_qnorm_qout", 0, ft_records(dict(head, quantized=quant), pq, blobs)),
             ("pq_plain", 0, ft_records(dict(head, quantized=plain), pq_plain, blobs)),
             ("pq_stsb", 2, ft_records(stsb, [t if t[0] != "wo" else ("wo", [1, 4], 0, f32(1, 2, 3, 4))
                                              for t in pq_plain], blobs[:3] + blobs[4:])),
             ("pq_later_version", 0, ft_records(dict(head, quantized=dict(quant, version=2)), pq, blobs))]
    for name, task, r in cases:
        put("fuzz_fasttext_ckpt", "raw_" + name, bytes([task << 1]) + ckpt_file(r, 2))
        put("fuzz_fasttext_ckpt", "wrapped_" + name, bytes([task << 1 | 1]) + r)


def safetensors(tensors, meta=None):
    header, data = {}, b""
    if meta is not None:
        header["__metadata__"] = meta
    for name, dtype, shape, size in tensors:
        n = size
        for s in shape:
            n *= s
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + n]}
        data += b"\x00" * n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def hf_seeds():
    st = safetensors([("bert.embeddings.word_embeddings.weight", "F32", [8, 16], 4), ("x", "F16", [2], 2),
                      ("ids", "I64", [1, 3], 8)], {"format": "pt"})
    put("fuzz_safetensors", "f32_f16_i64", b"\x01" + st)
    put("fuzz_safetensors", "bf16_scalar", b"\x00" + safetensors([("s", "BF16", [], 2)]))
    cfg = json.dumps({"architectures": ["BertForSequenceClassification"], "model_type": "bert", "vocab_size": 8,
                      "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                      "intermediate_size": 32, "max_position_embeddings": 8, "type_vocab_size": 2,
                      "id2label": {"0": "a", "1": "b"}}).encode()
    put("fuzz_hf_dir", "single", cfg + SEP + st)
    s1 = safetensors([("bert.embeddings.word_embeddings.weight", "F32", [8, 16], 4)])
    s2 = safetensors([("classifier.bias", "F32", [2], 4)])
    index = json.dumps({"metadata": {"total_size": 520}, "weight_map": {
        "bert.embeddings.word_embeddings.weight": "model-00001-of-00002.safetensors",
        "classifier.bias": "model-00002-of-00002.safetensors"}}).encode()
    put("fuzz_hf_dir", "sharded", cfg + SEP + index + SEP + s1 + SEP + s2)


def config_seeds():
    put("fuzz_config", "finetune_bert", b"\x00\x00" + b'{"epochs": 2, "lr": 3e-5, "batch": 16}' + SEP +
        b"dropout=0.2\nmax_len=64\nschedule=cosine")
    put("fuzz_config", "finetune_fasttext_sets_only", b"\x04\x09" + b"{}" + SEP + b"epochs=3\nlr=fast\nbogus=1")
    put("fuzz_config", "pretrain", b"\x01\x01" + b'{"model": "tiny", "steps": 10, "corpus": ["brown:x.txt", '
        b'{"path": "y.txt", "format": "text"}]}' + SEP + b"seq_len=64\nmask_prob=0.2")
    put("fuzz_config", "translate", b"\x02\x00" + b'{"epochs": 1, "d_model": 64}' + SEP + b"positions=lpr\nlpr_base=4")
    put("fuzz_config", "bert_model", b"\x03\x00" + b'{"vocab_size": 30, "hidden_size": 32, "num_hidden_layers": 1, '
        b'"num_attention_heads": 2, "hidden_act": "gelu"}')


def token_cache_seeds():
    ids = [5, 6, 7, 0xFFFF, 10, 11, 0xFFFF]
    shard = b"".join(struct.pack("<H", i) for i in ids)
    meta = json.dumps({"key": {}, "tokens": 5, "docs": 2, "units": 2, "seconds": 0}).encode()
    index_at = 32 + len(shard)
    head = b"GLUETOKS" + struct.pack("<IIII", 1, 2, 1, len(meta)) + struct.pack("<Q", index_at)
    index = struct.pack("<QQII", 32, len(ids), zlib.crc32(shard), 0)
    put("fuzz_token_cache", "raw_one_shard", b"\x00" + head + shard + index + meta)
    put("fuzz_token_cache", "build_text", b"\x01the cat sat .\nthe dogs running\n\nun cat\n")
    put("fuzz_token_cache", "build_brown", b"\x05The/at cat/nn sat/vbd ./.\n")


def run_dir_seeds():
    """fuzz_resume, fuzz_dataset_json, fuzz_run_lock: a run directory's
    resume state, dataset.json and lock file, valid and near misses."""
    cfg = {"epochs": 3}
    rec = {"epoch": 1, "loss": 0.5, "seconds": 1.0, "score": 80.0, "dev_loss": 0.4, "dev": {"accuracy": 80.0}}
    pos = {"epoch": 1, "batch": 2, "step": 7, "seed": 1, "train_seconds": 3.5, "best_score": "0x1.4p+6",
           "config": cfg, "history": [rec], "best": rec, "next_row": 16, "loss_sum": "0x1p-1",
           "labels": ["0", "1"]}
    text = json.dumps(pos).encode()
    absurd = dict(pos, epoch=1e308, batch=-5, step=1e300, train_seconds=-1,
                  best_score="nan", history={"x": 1}, best=[1])
    results = json.dumps({"labels": ["1", "0"], "best": rec}).encode()
    put("fuzz_resume", "both", bytes([3 | 1 << 3]) + text + SEP + text + SEP + results)
    put("fuzz_resume", "prev_only", bytes([2]) + b"" + SEP + text)
    put("fuzz_resume", "absurd", bytes([1 | 4]) + json.dumps(absurd).encode() + SEP + b"{" + SEP + results)
    put("fuzz_resume", "damaged", bytes([3]) + text[:40] + SEP + b"[]")
    put("fuzz_resume", "results_only", bytes([4 | 2 << 3]) + SEP + SEP + results)
    meta = {"name": "x", "format": "tsv", "header": True, "regression": False, "multi_label": False,
            "label_sep": ",", "columns": {"text_a": "text", "text_b": None, "label": "label"},
            "labels": ["neg", "pos"], "files": {"train": "/nonexistent", "dev": "/nonexistent"}}
    put("fuzz_dataset_json", "two", bytes([0]) + json.dumps(meta).encode())
    put("fuzz_dataset_json", "reordered", bytes([0]) + json.dumps(dict(meta, labels=["pos", "neg"])).encode())
    put("fuzz_dataset_json", "own_order", bytes([1]) + json.dumps(dict(meta, labels=["c", "a", "b"])).encode())
    put("fuzz_dataset_json", "regression", bytes([1]) + json.dumps(dict(meta, regression=True, labels=[])).encode())
    put("fuzz_dataset_json", "repeated", bytes([0]) + json.dumps(dict(meta, labels=["a", "a"])).encode())
    put("fuzz_dataset_json", "multi", bytes([1]) + json.dumps(dict(meta, multi_label=True, labels=["a", "b", "c"])).encode())
    put("fuzz_run_lock", "owner", b"pid=4242\nhost=node7\n")
    put("fuzz_run_lock", "no_host", b"pid=1\n")
    put("fuzz_run_lock", "huge_pid", b"pid=99999999999999999999\nhost=x\n")
    put("fuzz_run_lock", "empty", b"")
    put("fuzz_run_lock", "spaces", b"host=a b\npid=12\n")


if __name__ == "__main__":
    task_seeds()
    text_seeds()
    pred_seeds()
    ckpt_seeds()
    ft_seeds()
    hf_seeds()
    config_seeds()
    token_cache_seeds()
    run_dir_seeds()
