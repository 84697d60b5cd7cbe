"""glue.py — Python binding of libglue (include/glue.h) over ctypes: no
compiled extension, only the installed libglue.so.

    import glue
    with glue.Model("runs/sst2/bert") as m:
        print(m.labels)                      # ['negative', 'positive']
        for p in m.predict(["a gripping film", "dull"]):
            print(p["label"], p["probabilities"])

The library is found as $GLUE_LIB (a path), else libglue.so.<API version>
on the loader's path. Errors raise glue.Error with the library's message.
"""
import ctypes
import ctypes.util
import os

API_VERSION = 1
ERROR_MAX = 1024


class Error(Exception):
    """A libglue call failed; .status is its glue_status."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _load():
    path = os.environ.get("GLUE_LIB") or "libglue.so.%d" % API_VERSION
    # libgomp (loaded with libglue) reads once, as it loads, how long idle
    # OpenMP threads spin: by default for milliseconds, which on a busy machine
    # took 1.3-5x the CPU time of a short spin over the same predictions. The
    # glue command runs with GOMP_SPINCOUNT=3000 (core/threads.h); so does the
    # binding, unless the user chose, and the environment is left as it was.
    spin = "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ
    if spin:
        os.environ["GOMP_SPINCOUNT"] = "3000"
    try:
        lib = ctypes.CDLL(path)
    finally:
        if spin:
            del os.environ["GOMP_SPINCOUNT"]
    c_p, c_int = ctypes.c_void_p, ctypes.c_int
    lib.glue_api_version.restype = c_int
    lib.glue_open.argtypes = [ctypes.c_char_p, c_int, ctypes.POINTER(c_p), ctypes.c_char_p, ctypes.c_ulong]
    lib.glue_open.restype = c_int
    lib.glue_close.argtypes = [c_p]
    lib.glue_close.restype = None
    for name in ("glue_num_labels", "glue_is_pair", "glue_is_regression", "glue_is_multi_label"):
        getattr(lib, name).argtypes = [c_p]
        getattr(lib, name).restype = c_int
    for name in ("glue_model_kind", "glue_task"):
        getattr(lib, name).argtypes = [c_p]
        getattr(lib, name).restype = ctypes.c_char_p
    lib.glue_label.argtypes = [c_p, c_int]
    lib.glue_label.restype = ctypes.c_char_p
    lib.glue_predict.argtypes = [c_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), c_int,
                                 ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_ubyte), ctypes.c_char_p,
                                 ctypes.c_ulong]
    lib.glue_predict.restype = c_int
    if lib.glue_api_version() != API_VERSION:
        raise Error(2, "%s has API version %d, this binding %d" % (path, lib.glue_api_version(), API_VERSION))
    return lib


_lib = None


def _check_texts(texts, name):
    """A list (or tuple) of str or bytes, none holding a NUL: a str alone was
    taken as its characters, an int as a pointer (a crash), a NUL cut a text."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, (list, tuple)):
        raise TypeError("%s: a list of texts (for one text: [text])" % name)
    for t in texts:
        if not isinstance(t, (str, bytes)):
            raise TypeError("%s: each text a str or bytes, not %s" % (name, type(t).__name__))
        if ("\0" if isinstance(t, str) else b"\0") in t:
            raise Error(65, "%s: a text holds a NUL character" % name)


def _texts(texts):
    arr = (ctypes.c_char_p * len(texts))()
    for i, t in enumerate(texts):
        # surrogateescape: a str decoded from bytes that were not UTF-8 goes back
        # as those bytes, and the library refuses them (GLUE_ERR_DATA) as glue predict does
        arr[i] = t.encode("utf-8", "surrogateescape") if isinstance(t, str) else t
    return arr


class Model:
    """A trained run (a run directory or its model.ckpt), opened once.
    predict may be called from several threads at once."""

    def __init__(self, path, threads=0):
        global _lib
        if _lib is None:
            _lib = _load()
        self._h = ctypes.c_void_p()
        err = ctypes.create_string_buffer(ERROR_MAX)
        status = _lib.glue_open(os.fsencode(path), threads, ctypes.byref(self._h), err, ERROR_MAX)
        if status != 0:
            raise Error(status, err.value.decode("utf-8", "replace"))
        k = _lib.glue_num_labels(self._h)
        self.labels = [_lib.glue_label(self._h, i).decode("utf-8") for i in range(k)]
        self.pair = bool(_lib.glue_is_pair(self._h))
        self.regression = bool(_lib.glue_is_regression(self._h))
        self.multi_label = bool(_lib.glue_is_multi_label(self._h))
        self.kind = _lib.glue_model_kind(self._h).decode("utf-8")
        self.task = _lib.glue_task(self._h).decode("utf-8")

    def predict_raw(self, texts, texts_b=None):
        """(probabilities, predicted): two lists of rows, one per text, of
        len(labels) floats (the score, for regression) and 0/1 flags."""
        _check_texts(texts, "texts")
        if texts_b is not None:
            _check_texts(texts_b, "texts_b")
        n, k = len(texts), len(self.labels)
        if n == 0:
            return [], []
        if (texts_b is not None) != self.pair or (texts_b is not None and len(texts_b) != n):
            raise Error(2, "this model takes %s" % ("pairs: texts and texts_b of one length" if self.pair else "one text each"))
        probs = (ctypes.c_float * (n * k))()
        chosen = (ctypes.c_ubyte * (n * k))()
        err = ctypes.create_string_buffer(ERROR_MAX)
        b = _texts(texts_b) if texts_b is not None else None
        status = _lib.glue_predict(self._h, _texts(texts), b, n, probs, chosen, err, ERROR_MAX)
        if status != 0:
            raise Error(status, err.value.decode("utf-8", "replace"))
        return ([list(probs[i * k:(i + 1) * k]) for i in range(n)],
                [list(chosen[i * k:(i + 1) * k]) for i in range(n)])

    def predict(self, texts, texts_b=None):
        """One dict per text: {"score": x} for regression, else {"label": the
        predicted label (multi-label: "labels", a list), "probabilities":
        {label: p}} — the shape of `glue predict --json`."""
        out = []
        for p, c in zip(*self.predict_raw(texts, texts_b)):
            if self.regression:
                out.append({"score": p[0]})
                continue
            chosen = [l for l, f in zip(self.labels, c) if f]
            row = {"labels": chosen} if self.multi_label else {"label": chosen[0]}
            row["probabilities"] = dict(zip(self.labels, p))
            out.append(row)
        return out

    def close(self):
        if self._h:
            _lib.glue_close(self._h)
            self._h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None and getattr(self, "_h", None):
            self.close()
