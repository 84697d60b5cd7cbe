#!/usr/bin/env python3
"""png_ink.py — what a screenshot shows, for the browser test of `glue report`.

usage: tests/ref/png_ink.py FILE.png
Prints one JSON object: width, height, "ink" (the fraction of pixels that are
not white: a blank page is ~0) and "palette" (how many pixels are within 12
of each of the report's first three series colours, Okabe-Ito blue, orange and
green: drawn bars and curves, not only text). Decodes 8-bit RGB/RGBA
non-interlaced PNGs (what Chromium writes) with the standard library only."""
import json
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG file")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(f"{path}: unsupported PNG (depth {depth}, colour type {ctype})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = decode(sys.argv[1])
    palette = [(0, 114, 178), (230, 159, 0), (0, 158, 115)]
    ink, hits = 0, [0] * len(palette)
    for line in rows:
        for x in range(0, width * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 245 or g < 245 or b < 245:
                ink += 1
            for k, (pr, pg, pb) in enumerate(palette):
                if abs(r - pr) <= 12 and abs(g - pg) <= 12 and abs(b - pb) <= 12:
                    hits[k] += 1
    print(json.dumps({"width": width, "height": height, "ink": ink / (width * height), "palette": hits}))


if __name__ == "__main__":
    main()
