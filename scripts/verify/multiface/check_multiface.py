#!/usr/bin/env python3
"""Checks a multi-face facekit export (seed CSV, all 478 landmarks) against a
MediaPipe num_faces 8 golden (scripts/reference/multiface_golden.py).

  check_multiface.py EXPORT_DIR GOLDEN.npz [--exact-count] [--ids two-face|none]
                     [--loss-frames F] [--h5 EXPORT_DIR_HDF5] [--openface EXPORT_DIR_OF]

Per frame, every face MediaPipe finds must be exported: matched one to one
(greedily, nearest first) to a facekit row of that frame, with a landmark NME
(mean 2-D point distance in pixels over the 478 landmarks, divided by
MediaPipe's inter-ocular distance, outer eye corners 33 and 263) of at most
1 %. --exact-count: facekit exports no face MediaPipe does not find (stills).
Layout: faceId right after frameIndex in every table, the same (frame, face)
rows in each, a frame without a face has one row with faceId -1.
--ids two-face (the synthetic video of two_face_video.py): the face on the
left keeps one ID throughout; the face on the right keeps one ID across its
exit and return when it is missing for at most --loss-frames frames, and gets
a new one otherwise; IDs are never shared by the two faces.
--h5 / --openface: the same session exported as HDF5 / OpenFace must carry the
same (frame, face ID) rows (/face_ids, face_id).
Prints one line of figures per check; exits 1 on any failure.
"""
import argparse
import glob
import os
import sys

import numpy as np
import pandas as pd

MAX_NME = 0.01


def session_dir(d):
    s = glob.glob(os.path.join(d, "session_*"))
    if len(s) != 1:
        sys.exit(f"FAIL {d}: expected one session_* folder, found {s}")
    return s[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("golden")
    ap.add_argument("--exact-count", action="store_true")
    ap.add_argument("--ids", choices=["two-face", "none"], default="none")
    ap.add_argument("--loss-frames", type=int, default=15)
    ap.add_argument("--h5")
    ap.add_argument("--openface")
    a = ap.parse_args()
    bad = []
    s = session_dir(a.export)
    name = os.path.basename(a.golden)
    g = np.load(a.golden)
    W, H = int(g["width"]), int(g["height"])
    tables = {t: pd.read_csv(f"{s}/{t}.csv") for t in ("metadata", "blendshapes", "landmarks")}
    for t, df in tables.items():
        if list(df.columns[:3]) != ["timestamp", "frameIndex", "faceId"]:
            bad.append(f"{t}.csv: columns start {list(df.columns[:3])}")
    keys = [list(zip(df["frameIndex"], df["faceId"])) for df in tables.values()]
    if not all(k == keys[0] for k in keys):
        bad.append("the tables do not have the same (frame, face) rows")
    meta, marks = tables["metadata"], tables["landmarks"]
    tracked = meta["isFaceTracked"].astype(str).str.lower().eq("true").to_numpy()
    if not np.array_equal(tracked, meta["faceId"].to_numpy() >= 0):
        bad.append("isFaceTracked is not exactly the rows with faceId >= 0")
    cols = [f"v{i}.{c}" for i in range(478) for c in "xy"]
    xy = marks[cols].to_numpy(np.float64).reshape(-1, 478, 2) * [W, H]
    frames = marks["frameIndex"].to_numpy()
    ids = marks["faceId"].to_numpy()
    n_frames = len(g["num_faces"])
    if sorted(set(frames)) != list(range(n_frames)):
        bad.append(f"frames {sorted(set(frames))[:5]}..., MediaPipe decoded {n_frames}")
    for f in range(n_frames):
        rows = np.flatnonzero(frames == f)
        if (ids[rows] < 0).any() and len(rows) != 1:
            bad.append(f"frame {f}: a row with faceId -1 beside other rows")
        if len(set(ids[rows])) != len(rows):
            bad.append(f"frame {f}: a face ID twice")
    # Every MediaPipe face matched one to one, nearest first.
    nmes, extra, matched = [], 0, {}
    for f in range(n_frames):
        k = int(g["num_faces"][f])
        rows = [r for r in np.flatnonzero(frames == f) if ids[r] >= 0]
        mp = g["landmarks"][f, :k, :, :2].astype(np.float64) * [W, H]
        pairs = []
        for j in range(k):
            iod = np.linalg.norm(mp[j, 33] - mp[j, 263])
            for r in rows:
                pairs.append((np.linalg.norm(xy[r] - mp[j], axis=1).mean() / iod, j, r))
        used_j, used_r = set(), set()
        for nme, j, r in sorted(pairs):
            if j in used_j or r in used_r:
                continue
            used_j.add(j); used_r.add(r)
            nmes.append(nme)
            matched[(f, j)] = (ids[r], mp[j, :, 0].mean())
            if nme > MAX_NME:
                bad.append(f"frame {f} face {j}: NME {nme * 100:.2f} % of the inter-ocular distance")
        for j in set(range(k)) - used_j:
            bad.append(f"frame {f}: MediaPipe's face {j} is not exported")
        extra += len(rows) - len(used_r)
    if a.exact_count and extra:
        bad.append(f"{extra} exported face(s) MediaPipe does not find")
    nm = np.array(nmes) if nmes else np.zeros(1)
    print(f"{name}: {n_frames} frame(s), {int(g['num_faces'].sum())} MediaPipe face(s), {len(nmes)} matched, "
          f"{extra} extra; NME mean {nm.mean() * 100:.3f} %, max {nm.max() * 100:.3f} % of the inter-ocular distance")
    if a.ids == "two-face":
        side = {}
        for (f, j), (fid, cx) in matched.items():
            side.setdefault("left" if cx < W / 2 else "right", []).append((f, fid))
        left = sorted(side.get("left", []))
        right = sorted(side.get("right", []))
        lids = sorted(set(int(i) for _, i in left))
        rids = sorted(set(int(i) for _, i in right))
        # The right face's longest absence among facekit's own rows.
        present = sorted(set(f for f, i in zip(frames, ids) if i in rids))
        gap = max((b - a_ - 1 for a_, b in zip(present, present[1:])), default=0)
        print(f"IDs: left face {lids} in {len(left)} frames; right face {rids} in {len(right)} frames, "
              f"missing at most {gap} frames in a row (loss limit {a.loss_frames})")
        if len(lids) != 1:
            bad.append(f"the left face changed ID: {lids}")
        want = 1 if gap <= a.loss_frames else 2
        if len(rids) != want:
            bad.append(f"the right face has IDs {rids}, expected {want} (missing {gap} frames, limit {a.loss_frames})")
        if set(lids) & set(rids):
            bad.append("the two faces share an ID")
        if want == 2 and rids and right[0][1] != min(rids):
            bad.append("the returning face did not get a newer ID")
    rowkeys = list(zip(frames, ids))
    if a.h5:
        import h5py
        with h5py.File(f"{session_dir(a.h5)}/session.h5", "r") as h:
            hk = list(zip(h["frame_indices"][:], h["face_ids"][:]))
            n = {k: h[k].shape[0] for k in ("blendshapes", "metadata", "timestamps", "frame_indices", "face_ids", "landmarks")}
        if hk != rowkeys:
            bad.append("session.h5 /frame_indices, /face_ids differ from the CSV rows")
        if len(set(n.values())) != 1:
            bad.append(f"session.h5 per-row datasets differ in length: {n}")
        print(f"session.h5: {len(hk)} rows, /face_ids aligned with {sorted(n)}")
    if a.openface:
        of = pd.read_csv(f"{session_dir(a.openface)}/openface.csv", skipinitialspace=True)
        ok = list(zip(of["frame"] - 1, of["face_id"]))
        if ok != rowkeys:
            bad.append("openface.csv (frame - 1, face_id) differ from the CSV rows")
        print(f"openface.csv: {len(ok)} rows, face_id {sorted(set(int(i) for i in of['face_id']))}")
    if bad:
        print("\n".join("FAIL " + b for b in bad[:40]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
