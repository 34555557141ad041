#!/usr/bin/env bash
# Tracking end to end: `facekit process` on every test video (and a still) writes the seed's export
# through the session store. pandas/h5py read it back: the seed's column names and order, one row
# per decoded frame, face found as MediaPipe found it (>= 99 % of frames) and blend shapes within
# MAE 0.02 of MediaPipe's goldens (testdata/reference/mediapipe), in CSV and HDF5.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
W="$(mktemp -d /tmp/facekit-tracking.XXXXXX)"; trap 'rm -rf "$W"' EXIT
cd "$REPO"
for media in single_face.mp4 WolfgangLanger_Pexels.mp4 face_noface.mov noface_face.mov no_face.mp4 single_face.jpg; do
  stem="${media%.*}"
  for fmt in csv hdf5; do
    [ "$fmt" = hdf5 ] && [ "$media" != face_noface.mov ] && continue
    log "process $media ($fmt)"
    "$FACEKIT" process "testdata/$media" --out "$W/out-$media-$fmt" --store "$W/store" --participant "$stem" --format "$fmt" >/dev/null
  done
done
"$VENV/bin/python" - "$W" "$REPO" <<'PY'
import glob, json, os, sys
import numpy as np, pandas as pd, h5py
W, REPO = sys.argv[1], sys.argv[2]
NAMES = ["browDownLeft", "browDownRight", "browInnerUp", "browOuterUpLeft", "browOuterUpRight", "cheekPuff",
         "cheekSquintLeft", "cheekSquintRight", "eyeBlinkLeft", "eyeBlinkRight", "eyeLookDownLeft", "eyeLookDownRight",
         "eyeLookInLeft", "eyeLookInRight", "eyeLookOutLeft", "eyeLookOutRight", "eyeLookUpLeft", "eyeLookUpRight",
         "eyeSquintLeft", "eyeSquintRight", "eyeWideLeft", "eyeWideRight", "jawForward", "jawLeft", "jawOpen", "jawRight",
         "mouthClose", "mouthDimpleLeft", "mouthDimpleRight", "mouthFrownLeft", "mouthFrownRight", "mouthFunnel",
         "mouthLeft", "mouthLowerDownLeft", "mouthLowerDownRight", "mouthPressLeft", "mouthPressRight", "mouthPucker",
         "mouthRight", "mouthRollLower", "mouthRollUpper", "mouthShrugLower", "mouthShrugUpper", "mouthSmileLeft",
         "mouthSmileRight", "mouthStretchLeft", "mouthStretchRight", "mouthUpperUpLeft", "mouthUpperUpRight",
         "noseSneerLeft", "noseSneerRight", "tongueOut"]
AUS = ["au1", "au2", "au4", "au5", "au6", "au7", "au9", "au12", "au14", "au15", "au16", "au20", "au23", "au26"]
bad = []
def check(name, found, blend, golden):
    g = np.load(golden)
    gf = g["face_found"]
    if len(found) != len(gf):
        bad.append(f"{name}: {len(found)} rows, MediaPipe decoded {len(gf)} frames"); return
    agree = float(np.mean(found == gf))
    both = found & gf
    mae = float(np.nanmean(np.abs(blend[both][:, :51] - g["blendshapes"][both, 0, 1:]))) if both.any() else 0.0
    print(f"{name}: {len(found)} frames, found agreement {agree*100:.1f} %, blend shape MAE {mae:.5f}")
    if agree < 0.99: bad.append(f"{name}: face found agreement {agree:.3f}")
    if mae > 0.02: bad.append(f"{name}: blend shape MAE {mae:.4f}")
    if both.any() and not np.isnan(blend[both][:, 51]).all(): bad.append(f"{name}: tongueOut is not NaN")
for d in sorted(glob.glob(f"{W}/out-*")):
    media, fmt = os.path.basename(d)[4:].rsplit("-", 1)
    stem, ext = media.rsplit(".", 1)
    sess = glob.glob(f"{d}/session_*")
    if len(sess) != 1: bad.append(f"{d}: expected one session_* folder, found {sess}"); continue
    s = sess[0]
    golden = f"{REPO}/testdata/reference/mediapipe/{stem}_{ext.lower()}.npz"
    if fmt == "csv":
        meta = pd.read_csv(f"{s}/metadata.csv")
        if list(meta.columns[:3]) != ["timestamp", "frameIndex", "isFaceTracked"] or list(meta.columns[-17:]) != ["headPose.pitch", "headPose.yaw", "headPose.roll"] + AUS:
            bad.append(f"{s}/metadata.csv: columns {list(meta.columns)}")
        if os.path.exists(f"{s}/blendshapes.csv"):
            bs = pd.read_csv(f"{s}/blendshapes.csv")
            if list(bs.columns) != ["timestamp", "frameIndex"] + NAMES: bad.append(f"{s}/blendshapes.csv: columns {list(bs.columns)}")
            blend = bs[NAMES].to_numpy(np.float64)
        else:
            blend = np.full((len(meta), 52), np.nan)
        found = meta["isFaceTracked"].astype(str).str.lower().eq("true").to_numpy()
        if not np.all(np.diff(meta["timestamp"].to_numpy()) > 0) and len(meta) > 1: bad.append(f"{s}: timestamps not increasing")
    else:
        with h5py.File(f"{s}/session.h5", "r") as f:
            cols = f["blendshapes"].attrs["columns"]
            cols = (cols.decode() if isinstance(cols, bytes) else str(cols)).split(",")
            if cols != NAMES: bad.append(f"{s}/session.h5: blendshapes columns {cols[:3]}...")
            blend = f["blendshapes"][:].astype(np.float64)
            mcols = f["metadata"].attrs["columns"]
            mcols = (mcols.decode() if isinstance(mcols, bytes) else str(mcols)).split(",")
            found = f["metadata"][:, mcols.index("isFaceTracked")] > 0.5
            if f["timestamps"].shape[0] != blend.shape[0]: bad.append(f"{s}: timestamps and blendshapes differ in length")
    check(f"{media} ({fmt})", found, blend, golden)
if bad:
    print("\n".join("FAIL " + b for b in bad)); sys.exit(1)
print("tracking exports: all checks passed")
PY
