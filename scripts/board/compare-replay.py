#!/usr/bin/env python3
"""Cross-board check of the replay test (board/emulated/tests/replay.sh), with h5py and numpy.

    compare-replay.py REFERENCE_DIR OTHER_DIR...

Each DIR is a board's `facekit process` export of the same MJPEG clip (the stick's
<machine>/session_*/ copied out with mtools). Every export must match its manifest, and the
landmarks, blend shapes, metadata and frame indices must equal the reference's bit for bit (the
arrays' bytes, so -0.0 and NaN payloads count). Timestamps are not compared: a Y4M file carries
none, so they are the reading clock's, different on every run. Prints one line per check and
exits 1 on any difference.
"""
import glob, hashlib, json, os, sys

import h5py
import numpy as np

failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def load(d):
    s = sorted(glob.glob(os.path.join(d, "**", "session.h5"), recursive=True))
    check(len(s) == 1, f"{d}: one session.h5 ({len(s)} found)")
    if len(s) != 1:
        return None
    sd = os.path.dirname(s[0])
    man = json.load(open(os.path.join(sd, "manifest.json")))
    for f in man["files"]:
        data = open(os.path.join(sd, f["path"]), "rb").read()
        check(len(data) == f["size"] and hashlib.sha256(data).hexdigest() == f["sha256"],
              f"{os.path.relpath(sd, d)}/{f['path']}: size and SHA-256 match the manifest")
    with h5py.File(s[0], "r") as h:
        return {k: h[k][()] for k in h.keys()}


ref_dir, others = sys.argv[1], sys.argv[2:]
ref = load(ref_dir)
for o in others:
    cur = load(o)
    if ref is None or cur is None:
        continue
    n = len(ref["frame_indices"])
    check(n > 0 and len(cur["frame_indices"]) == n, f"{o}: {len(cur['frame_indices'])} frames, reference {n}")
    faces = int(np.count_nonzero(np.any(ref["landmarks"].reshape(n, -1) != 0, axis=1))) if n else 0
    check(faces == n, f"reference: a face tracked in {faces} of {n} frames")
    for k in ("landmarks", "blendshapes", "metadata", "frame_indices"):
        a, b = ref.get(k), cur.get(k)
        same = a is not None and b is not None and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        detail = ""
        if not same and a is not None and b is not None and a.shape == b.shape:
            detail = f" (max |diff| {np.nanmax(np.abs(a.astype(np.float64) - b.astype(np.float64))):.3g})"
        check(same, f"{o}: {k} {None if b is None else b.shape} {None if b is None else b.dtype} bit-identical to {ref_dir}{detail}")
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
