#!/usr/bin/env python3
"""Writes the golden .npy/.npz files in this directory from the format spec
(https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html) and
NumPy's writer (numpy/lib/_format_impl.py: _write_array_header, _wrap_header),
without NumPy: only struct and zipfile. Each little-endian C-order v1.0 file
is byte-for-byte what np.save writes (checked with NumPy 2.x where it is
installed: python3 gen_golden.py --check). The Go tests hold the expected
values independently. Run from this directory."""
import struct, sys, zipfile, io, math

def header_dict(descr, shape, fortran=False):
    shape_repr = "()" if not shape else "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    h = "{'descr': %r, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_repr)
    if shape:  # GROWTH_AXIS_MAX_DIGITS = 21 spare spaces minus the digits of the growth axis
        h += " " * (21 - len(repr(shape[-1 if fortran else 0])))
    return h

def wrap(h, version):
    fmt = "<H" if version[0] == 1 else "<I"
    hb = h.encode("latin1" if version[0] < 3 else "utf8")
    hlen = len(hb) + 1
    pad = 64 - ((6 + 2 + struct.calcsize(fmt) + hlen) % 64)
    return b"\x93NUMPY" + bytes(version) + struct.pack(fmt, hlen + pad) + hb + b" " * pad + b"\n"

def data(code, order, values):
    if code == "bf16":  # bfloat16: top half of the float32, values chosen exact
        return b"".join(struct.pack(order + "H", struct.unpack("<I", struct.pack("<f", v))[0] >> 16) for v in values)
    if code == "?":
        return bytes(1 if v else 0 for v in values)
    return struct.pack(order + code * len(values), *values)

# name, descr, struct code, shape, values (C order)
CASES = [
    ("bool", "|b1", "?", [2, 3], [1, 0, 1, 1, 0, 0]),
    ("int8", "|i1", "b", [4], [-128, -1, 0, 127]),
    ("int16", "<i2", "h", [2, 2], [-32768, -2, 3, 32767]),
    ("int32", "<i4", "i", [3], [-2147483648, 7, 2147483647]),
    ("int64", "<i8", "q", [2], [-9223372036854775808, 9223372036854775807]),
    ("uint8", "|u1", "B", [3], [0, 128, 255]),
    ("uint16", "<u2", "H", [2], [1, 65535]),
    ("uint32", "<u4", "I", [2], [1, 4294967295]),
    ("uint64", "<u8", "Q", [2], [1, 18446744073709551615]),
    ("float16", "<f2", "e", [5], [1.0, -2.0, 65504.0, 2.0**-24, 0.333251953125]),
    ("bfloat16", "<V2", "bf16", [3], [1.0, -2.0, 3.140625]),
    ("float32", "<f4", "f", [2, 3], [1.0, 2.0, 3.0, -4.5, 0.25, float("inf")]),
    ("float64", "<f8", "d", [2, 2], [0.1, -1e300, 5e-324, -0.0]),
    ("scalar_float32", "<f4", "f", [], [7.5]),
    ("empty_float32", "<f4", "f", [0], []),
    ("empty_2x0_int64", "<i8", "q", [2, 0], []),
    ("big_dims_uint8", "|u1", "B", [1, 1, 2, 1, 3], [1, 2, 3, 4, 5, 6]),
    ("wide_axis_float32", "<f4", "f", [1234567], None),  # header only matters: see below
]

def main():
    files = {}
    for name, descr, code, shape, values in CASES:
        if values is None:
            continue
        files[name + ".npy"] = wrap(header_dict(descr, shape), (1, 0)) + data(code, "<", values)
    # Big-endian data.
    files["be_float32.npy"] = wrap(header_dict(">f4", [3]), (1, 0)) + data("f", ">", [1.0, -2.5, 1e-3])
    files["be_int16.npy"] = wrap(header_dict(">i2", [2]), (1, 0)) + data("h", ">", [-2, 258])
    files["be_float64.npy"] = wrap(header_dict(">f8", [2]), (1, 0)) + data("d", ">", [0.1, -7.0])
    files["be_uint64.npy"] = wrap(header_dict(">u8", [1]), (1, 0)) + data("Q", ">", [0x0102030405060708])
    # Fortran order: the 2x3 array [[1,2,3],[4,5,6]] stored column by column,
    # and a 2x3x2 one whose C-order values are 0..11.
    files["fortran_float32.npy"] = wrap(header_dict("<f4", [2, 3], True), (1, 0)) + data("f", "<", [1, 4, 2, 5, 3, 6])
    cvals_at = lambda i, j, k: i * 6 + j * 2 + k
    fdata = [cvals_at(i, j, k) for k in range(2) for j in range(3) for i in range(2)]
    files["fortran_int32_2x3x2.npy"] = wrap(header_dict("<i4", [2, 3, 2], True), (1, 0)) + data("i", "<", fdata)
    # Format versions 2.0 and 3.0 (same header and data as float32.npy).
    f32 = CASES[11]
    files["v2_float32.npy"] = wrap(header_dict(f32[1], f32[3]), (2, 0)) + data("f", "<", f32[4])
    files["v3_float32.npy"] = wrap(header_dict(f32[1], f32[3]), (3, 0)) + data("f", "<", f32[4])
    # Archives: np.savez (stored) and np.savez_compressed (deflated).
    for fname, method in (("arrays_stored.npz", zipfile.ZIP_STORED), ("arrays_deflated.npz", zipfile.ZIP_DEFLATED)):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=method) as z:
            z.writestr("w.npy", files["float32.npy"])
            z.writestr("b.npy", files["int64.npy"])
            z.writestr("mask.npy", files["bool.npy"])
        files["../" + fname] = buf.getvalue()
    for fname, blob in files.items():
        with open("npy/" + fname, "wb") as f:
            f.write(blob)
    # The header alone of a wide axis, to check the growth padding for a 7-digit extent.
    with open("npy/wide_axis_float32.header", "wb") as f:
        f.write(wrap(header_dict("<f4", [1234567]), (1, 0)))
    if "--check" in sys.argv:
        check(files)

def check(files):
    import numpy as np
    for name, descr, code, shape, values in CASES:
        if values is None or name == "bfloat16":
            continue
        dt = np.dtype(descr)
        arr = np.array(values, dtype=dt).reshape(shape)
        b = io.BytesIO(); np.save(b, arr)
        assert b.getvalue() == files[name + ".npy"], name
        got = np.load(io.BytesIO(files[name + ".npy"]))
        assert got.dtype == dt and list(got.shape) == shape, name
    b = io.BytesIO(); np.save(b, np.zeros(1234567, np.float32))
    assert b.getvalue().startswith(open("npy/wide_axis_float32.header", "rb").read())
    for f in ("be_float32", "fortran_float32", "fortran_int32_2x3x2", "v2_float32", "v3_float32"):
        a = np.load(io.BytesIO(files[f + ".npy"]))
        print(f, a.dtype, a.shape, a.ravel(order="C").tolist())
    b = io.BytesIO(); np.save(b, np.asfortranarray(np.array([[1, 2, 3], [4, 5, 6]], np.float32)))
    assert b.getvalue() == files["fortran_float32.npy"]
    with np.load("arrays_deflated.npz") as z:
        print("npz", z.files, [z[k].tolist() for k in z.files])
    print("all checks passed against numpy", np.__version__)

main()
