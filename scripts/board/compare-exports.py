#!/usr/bin/env python3
"""compare-exports.py A B: two HDF5 exports of the same input (each a directory holding one
session_*/session.h5, or the file itself) must agree bit for bit: landmarks, blend shapes,
metadata and frame indices byte-identical, frame times identical relative to the first frame
(the absolute times start at each run's own session start). Used to show that the aarch64 build
computes what the x86_64 build computes. Exit 1 with the differing datasets named."""
import glob, os, sys
import h5py, numpy as np

def session(path):
    if os.path.isfile(path):
        return path
    found = glob.glob(os.path.join(path, "*", "session.h5")) + glob.glob(os.path.join(path, "session.h5"))
    if len(found) != 1:
        sys.exit(f"{path}: expected one session.h5, found {found}")
    return found[0]

def main():
    a, b = (h5py.File(session(p), "r") for p in sys.argv[1:3])
    bad = []
    for name in ("landmarks", "blendshapes", "metadata", "frame_indices"):
        if name not in a or name not in b:
            if name in a or name in b:
                bad.append(f"{name}: in one export only")
            continue
        x, y = a[name][()], b[name][()]
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            n = int(np.sum(x.view(np.uint8) != y.view(np.uint8))) if x.shape == y.shape and x.dtype == y.dtype else -1
            bad.append(f"{name}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}, {n} bytes differ")
        else:
            print(f"  {name}: {x.shape} {x.dtype} identical")
    ta, tb = a["timestamps"][()], b["timestamps"][()]
    if ta.shape != tb.shape or np.max(np.abs((ta - ta[0]) - (tb - tb[0])), initial=0) > 1e-6:
        bad.append("timestamps: frame times relative to the first frame differ")
    else:
        print(f"  timestamps: {ta.shape[0]} frame times identical relative to the first")
    for line in bad:
        print("  DIFFERS:", line)
    sys.exit(1 if bad else 0)

main()
