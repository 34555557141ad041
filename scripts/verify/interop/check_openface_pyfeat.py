"""Checks facekit's OpenFace and py-feat exports of one session with py-feat's own readers.

usage: check_openface_pyfeat.py WHEEL SEED_EXPORT OPENFACE_EXPORT PYFEAT_EXPORT
  WHEEL            the pinned py-feat wheel (its readers, plotting and sample files)
  SEED_EXPORT      the session exported as csv (the seed's layout): the values to compare with
  OPENFACE_EXPORT  the same session exported with --format openface
  PYFEAT_EXPORT    the same session exported with --format pyfeat
"""
import hashlib
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfeat_loader  # noqa: E402

wheel, seed_dir, of_dir, pf_dir = sys.argv[1:5]
work = tempfile.mkdtemp(prefix="facekit-pyfeat-")
feat = pyfeat_loader.load(wheel, work)
import pandas as pd  # noqa: E402
from feat.utils import (FEAT_EMOTION_COLUMNS, FEAT_FACEPOSE_COLUMNS_6D,  # noqa: E402
                        OPENFACE_ORIG_COLUMNS)
from feat.utils.io import read_feat, read_openface  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# The reference values: the seed's CSV export of the same session.
meta = pd.read_csv(os.path.join(seed_dir, "metadata.csv"))
marks = pd.read_csv(os.path.join(seed_dir, "landmarks.csv"))
info = json.load(open(os.path.join(of_dir, "session.json")))
W, H = (float(v) for v in info["device"]["size"].split("x"))
tracked = meta["isFaceTracked"].astype(bool).to_numpy()
n = len(meta)
MESH68 = [127, 234, 93, 132, 58, 172, 136, 150, 176, 148, 152, 377, 400, 379, 365, 397, 356, 70, 63, 105, 66, 107,
          336, 296, 334, 293, 300, 168, 6, 195, 4, 240, 75, 1, 305, 460, 33, 160, 158, 133, 153, 144, 362, 385, 387,
          263, 373, 380, 61, 39, 37, 0, 267, 269, 291, 405, 314, 17, 84, 181, 78, 82, 13, 312, 308, 317, 14, 87]
AUS = [1, 2, 4, 5, 6, 7, 9, 12, 14, 15, 20, 23, 26]  # facekit's AUs that OpenFace and py-feat name
print(f"session {info['sessionID']}: {n} frames, {tracked.sum()} with a face, {W:.0f}x{H:.0f}")

# Sidecars and manifests: every file listed with its SHA-256, the mapping names recorded.
for d, name in ((of_dir, "openface.csv"), (pf_dir, "pyfeat.csv")):
    man = json.load(open(os.path.join(d, "manifest.json")))
    entries = {e["path"]: e for e in man["files"]}
    check(name in entries, f"{name} is in its manifest")
    for path, e in entries.items():
        data = open(os.path.join(d, path), "rb").read()
        check(hashlib.sha256(data).hexdigest() == e["sha256"] and len(data) == e["size"],
              f"{os.path.basename(d)}/{path}: SHA-256 and size match the manifest")
    side = json.load(open(os.path.join(d, "session.json")))
    check(side.get("landmarkMapping68") == "ibug68-from-mediapipe478/py-feat-2.1.5"
          and side.get("auMappingVersion", "").startswith("facekit-au-1"), f"{name}: session.json names both mappings")

# ---- OpenFace: py-feat's read_openface on its own fixture and on ours.
fixture_path = os.path.join(work, "feat", "tests", "data", "OpenFace_Test.csv")
fixture = read_openface(fixture_path)
ours = read_openface(os.path.join(of_dir, "openface.csv"))
check(list(fixture.columns) == OPENFACE_ORIG_COLUMNS + ["input"], "fixture: read_openface returns OPENFACE_ORIG_COLUMNS + input")
of_header = [c.strip() for c in open(os.path.join(of_dir, "openface.csv")).readline().split(",")]
expected = (["frame", "face_id", "timestamp", "confidence", "success",
             "gaze_0_x", "gaze_0_y", "gaze_0_z", "gaze_1_x", "gaze_1_y", "gaze_1_z", "gaze_angle_x", "gaze_angle_y",
             "pose_Tx", "pose_Ty", "pose_Tz", "pose_Rx", "pose_Ry", "pose_Rz"]
            + [f"{a}_{i}" for a in "xyXYZ" for i in range(68)]
            + [f"AU{a:02d}_r" for a in AUS] + [f"AU{a:02d}_c" for a in AUS])
check(of_header == expected, f"openface.csv: OpenFace 2.2's names in its order ({len(of_header)} columns)")
check(list(ours.columns) == of_header + ["input"], "read_openface returns every column of ours (+ input)")
left_out = [c for c in fixture.columns if c not in ours.columns]
expected_left_out = (["p_scale", "p_rx", "p_ry", "p_rz", "p_tx", "p_ty"] + [f"p_{i}" for i in range(34)]
                     + ["AU10_r", "AU17_r", "AU25_r", "AU45_r", "AU10_c", "AU17_c", "AU25_c", "AU28_c", "AU45_c"])
check(left_out == expected_left_out, f"left out, exactly: PDM parameters p_* (40) and AUs facekit does not derive ({len(left_out)})")
extra = [c for c in ours.columns if c not in fixture.columns]
check(extra == ["face_id", "gaze_angle_x", "gaze_angle_y"], f"OpenFace 2.2 columns the older fixture lacks: {extra}")
same, all_zero_int = 0, []
for c in fixture.columns:
    if c not in ours.columns:
        continue
    a, b = fixture[c].dtype, ours[c].dtype
    if a == b:
        same += 1
    elif c.endswith("_r") and a == np.int64 and b == np.float64 and (fixture[c] == 0).all():
        all_zero_int.append(c)  # pandas reads the fixture's all-"0" intensity columns as integers
    else:
        check(False, f"dtype of {c}: fixture {a}, ours {b}")
check(same + len(all_zero_int) == len([c for c in fixture.columns if c in ours.columns]),
      f"dtypes: {same} shared columns identical; {all_zero_int} are int64 in the fixture only because every value is 0")
check(len(ours) == n, f"one row per recorded frame ({len(ours)})")
check((ours["frame"].to_numpy() == meta["frameIndex"].to_numpy() + 1).all(), "frame = frameIndex + 1 (from 1)")
check((ours["face_id"] == 0).all(), "face_id 0")
check((ours["success"].to_numpy() == tracked).all() and ((ours["confidence"] > 0.8).to_numpy() == tracked).all(),
      "success and confidence >= 0.8 exactly on the tracked frames")
ts = meta["timestamp"].to_numpy()
check(np.abs(ours["timestamp"].to_numpy() - (ts - ts[0])).max() <= 0.0005 + 1e-9, "timestamp: seconds since the first frame (3 decimals)")
t = ours[tracked]
g0 = t[["gaze_0_x", "gaze_0_y", "gaze_0_z"]].to_numpy()
check(np.abs(np.linalg.norm(g0, axis=1) - 1).max() < 1e-5 and (g0[:, 2] < 0).all(), "gaze_0: unit vectors towards the camera (z < 0)")
check(np.abs(t["gaze_angle_x"] - np.arctan2(g0[:, 0], -g0[:, 2])).max() < 0.0006, "gaze_angle_x = atan2(x, -z) (rad)")
mt = meta[tracked]
check(np.abs(t["pose_Tz"].to_numpy() - mt["distanceToScreen"].to_numpy() * 1000).max() <= 0.05 + 1e-6, "pose_Tz = distance in mm")


def openface_rotation(p, y, r):
    """Independent of the exporter: R = Rz(r)·Ry(y)·Rx(p) → F·R·F → Rx·Ry·Rz Euler angles."""
    cx, sx, cy, sy, cz, sz = np.cos(p), np.sin(p), np.cos(y), np.sin(y), np.cos(r), np.sin(r)
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    F = np.diag([1.0, -1.0, -1.0])
    R = F @ (Rz @ Ry @ Rx) @ F
    return np.arctan2(-R[1, 2], R[2, 2]), np.arcsin(R[0, 2]), np.arctan2(-R[0, 1], R[0, 0])


rot = np.array([openface_rotation(*v) for v in mt[["headPose.pitch", "headPose.yaw", "headPose.roll"]].to_numpy()])
check(np.abs(t[["pose_Rx", "pose_Ry", "pose_Rz"]].to_numpy() - rot).max() <= 0.0005 + 1e-6, "pose_R*: OpenFace's R = Rx·Ry·Rz in its camera frame (rad)")
mt_marks = marks[tracked]
px = np.stack([mt_marks[f"v{m}.x"].to_numpy() * W for m in MESH68], axis=1)
py = np.stack([mt_marks[f"v{m}.y"].to_numpy() * H for m in MESH68], axis=1)
check(np.abs(t[[f"x_{i}" for i in range(68)]].to_numpy() - px).max() <= 0.05 + 1e-3, "x_0..x_67: the mapped mesh vertices in px")
check(np.abs(t[[f"y_{i}" for i in range(68)]].to_numpy() - py).max() <= 0.05 + 1e-3, "y_0..y_67: the mapped mesh vertices in px")
Z = t[[f"Z_{i}" for i in range(68)]].to_numpy()
check((np.abs(np.median(Z, axis=1) - t["pose_Tz"].to_numpy()) < 60).all(), "Z_*: mm, around the head's depth")
for a in AUS:
    r = t[f"AU{a:02d}_r"].to_numpy()
    check(np.abs(r - np.clip(mt[f"au{a}"].to_numpy() * 5, 0, 5)).max() <= 0.005 + 1e-6 and
          (t[f"AU{a:02d}_c"].to_numpy() == (np.round(mt[f"au{a}"].to_numpy() * 5, 6) >= 1)).all(), f"AU{a:02d}_r = 5 x au{a}, _c = _r >= 1")
nf = ours[~tracked].drop(columns=["frame", "timestamp", "input"])
check(len(nf) > 0 and (nf.to_numpy(dtype=float) == 0).all(), f"frames without a face ({len(nf)}): success 0 and zeros, as OpenFace writes them")
ours.au_columns = [c for c in ours.au_columns if c in ours.columns]
check(ours.aus.shape == (n, 2 * len(AUS)) and ours.landmarks.shape == (n, 136) and ours.poses.shape == (n, 6),
      "Fex accessors: aus (au_columns narrowed to the AUs written), landmarks, poses")

# ---- py-feat: read_feat, as for py-feat's own Detectorv1 CSV; then its plotting.
pf_path = os.path.join(pf_dir, "pyfeat.csv")
own = read_feat(os.path.join(work, "feat", "tests", "data", "Feat_Test.csv"))
fex = read_feat(pf_path)
expected = (["FaceRectX", "FaceRectY", "FaceRectWidth", "FaceRectHeight", "FaceScore"]
            + [f"x_{i}" for i in range(68)] + [f"y_{i}" for i in range(68)] + ["Pitch", "Roll", "Yaw"]
            + [f"AU{a:02d}" for a in AUS] + ["anger", "disgust", "fear", "happiness", "sadness", "surprise"]
            + ["gaze_pitch", "gaze_yaw", "gaze_angle"] + ["FrameHeight", "FrameWidth", "input", "frame", "approx_time"])
check(list(fex.columns) == expected, f"pyfeat.csv: py-feat's names in its order ({len(fex.columns)} columns)")
check(fex.detector == "Feat" and fex.au_columns == [f"AU{a:02d}" for a in AUS], "read_feat: a Detectorv1 Fex with our 13 AUs")
shared = [c for c in own.columns if c in fex.columns]
diff = [(c, own[c].dtype, fex[c].dtype) for c in shared if own[c].dtype != fex[c].dtype]
check(not diff, f"dtypes of the {len(shared)} columns shared with py-feat's Feat_Test.csv identical {diff or ''}")
check(len(fex) == n and (fex["frame"].to_numpy() == meta["frameIndex"].to_numpy()).all(), "one row per frame; frame = frameIndex")
ft = fex[tracked]
check(np.abs(ft[["Pitch", "Yaw", "Roll"]].to_numpy() - mt[["headPose.pitch", "headPose.yaw", "headPose.roll"]].to_numpy()).max() <= 5e-7 + 1e-7,
      "Pitch, Roll, Yaw: facekit's head pose in radians")
check(np.abs(ft[[f"x_{i}" for i in range(68)]].to_numpy() - px).max() <= 0.0005 + 1e-3, "x_*: px")
check(all(np.abs(ft[f"AU{a:02d}"].to_numpy() - mt[f"au{a}"].to_numpy()).max() <= 5e-7 + 1e-7 for a in AUS), "AUxx: facekit's AU values (0-1)")
check(np.abs(ft["happiness"].to_numpy() - mt["emotion.happiness"].to_numpy()).max() <= 5e-7 + 1e-7, "emotions: facekit's scores")
look = mt[["lookAtPoint.x", "lookAtPoint.y", "lookAtPoint.z"]].to_numpy().astype(float)
look /= np.linalg.norm(look, axis=1, keepdims=True)
gp, gy = np.arcsin(look[:, 1]), np.arctan2(look[:, 0], look[:, 2])
check(np.abs(ft["gaze_pitch"] - gp).max() <= 1e-5 and np.abs(ft["gaze_yaw"] - gy).max() <= 1e-5
      and np.abs(ft["gaze_angle"] - np.arccos(np.cos(gp) * np.cos(gy))).max() <= 1e-5,
      "gaze_pitch/yaw/angle: head-centric rad (up, subject's left positive), as py-feat's face_gaze")
# read_feat sets gaze_columns only for Detectorv2 files; Fex.gazes needs them named.
fex.gaze_columns = ["gaze_pitch", "gaze_yaw", "gaze_angle"]
check(fex.gazes.shape == (n, 3), "Fex.gazes with gaze_columns named")
box = ft[["FaceRectX", "FaceRectY", "FaceRectWidth", "FaceRectHeight"]].to_numpy()
check(((box[:, 0:1] <= px + 1e-3) & (px <= box[:, 0:1] + box[:, 2:3] + 1e-3)).all(), "FaceRect holds the 68 points")
secs = (ts - ts[0]).astype(int)
check((fex["approx_time"].to_numpy() == [f"{s // 60:02d}:{s % 60:02d}" for s in secs]).all(), "approx_time: py-feat's MM:SS")
blank = fex[~tracked].drop(columns=["input", "frame", "approx_time"])
check(blank.isna().all().all(), "frames without a face: every value NaN, as py-feat writes them")
try:
    fex.emotions
    check(False, "read_feat's emotion columns (with neutral) were expected to be incomplete")
except KeyError:
    print("note read_feat assumes neutral and X, Y, Z (not written): emotion_columns/facepose_columns narrowed for plotting")
fex.emotion_columns = [c for c in FEAT_EMOTION_COLUMNS if c in fex.columns]
fex.facepose_columns = [c for c in FEAT_FACEPOSE_COLUMNS_6D if c in fex.columns]
frames = [int(f) for f in fex["frame"][tracked][:2]] + [int(f) for f in fex["frame"][~tracked][:1]]
figs = fex[fex["frame"].isin(frames)].plot_detections(faces="landmarks", plot_original_image=False, poses=True, gazes=True)
png = os.environ.get("FACEKIT_PLOT", os.path.join(work, "detections.png"))
figs[0].savefig(png)
check(len(figs) == len(frames) and os.path.getsize(png) > 10_000, f"Fex.plot_detections: {len(figs)} figures (landmarks, face box, pose, gaze, AU and emotion bars)")

print(f"{len(failures)} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
