#!/usr/bin/env bash
# Multi-face sessions end to end: `facekit process --max-faces 8` on every still (against MediaPipe
# num_faces 8 goldens in testdata/reference/mediapipe-multiface, made by make-references or here),
# on a video whose face comes and goes (face_noface.mov: frames without a face keep a row with
# faceId -1) and on a synthetic two-face video made here from the fetched stills
# (scripts/reference/two_face_video.py; its MediaPipe golden is made here too, nothing is
# committed). Every face MediaPipe finds must be exported with landmark NME <= 1 % of its
# inter-ocular distance; in the two-face video each face keeps its ID, also across the right face's
# exit and return, and with --face-loss-frames 5 the returning face gets a new one. The HDF5 and
# OpenFace exports of the same session carry the same (frame, face ID) rows.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
[ -x "$VENV/bin/python" ] || die "no verification venv: run scripts/install-deps"
W="$(mktemp -d -t facekit-multiface.XXXXXX)"; trap 'rm -rf "$W"' EXIT
cd "$REPO"
PY="$VENV/bin/python"
CHECK="$REPO/scripts/verify/multiface/check_multiface.py"
GOLDEN="$REPO/testdata/reference/mediapipe-multiface"
# MediaPipe's absl/TFLite chatter is dropped from stderr; errors stay.
quiet() { "$@" 2> >(grep -vE '^(W0000|I0000|WARNING: Logging before InitGoogle|INFO: Created TensorFlow Lite)' >&2); }
fail=0
# The stills' goldens (made by scripts/reference/make-references; up to date in a few seconds).
quiet "$PY" scripts/reference/multiface_golden.py stills

for still in multi_face.jpg single_face.jpg 0-f1-su-ph.jpg 0-f15-hao-ph.jpg 15-f13-anc-ph.jpg 45-m7-di-ph.jpg BWPictureHuman.jpg; do
  stem="${still%.*}"
  "$FACEKIT" process "testdata/$still" --max-faces 8 --out "$W/$stem" --store "$W/store" > /dev/null
  "$PY" "$CHECK" "$W/$stem" "$GOLDEN/${stem}_jpg_faces8.npz" --exact-count || fail=1
done

log "face_noface.mov --max-faces 8 (MediaPipe golden made now)"
quiet "$PY" scripts/reference/multiface_golden.py video testdata/face_noface.mov "$W/fnf.npz" > /dev/null
"$FACEKIT" process testdata/face_noface.mov --max-faces 8 --out "$W/fnf" --store "$W/store" > /dev/null
"$PY" "$CHECK" "$W/fnf" "$W/fnf.npz" || fail=1
none="$("$PY" -c "import pandas as pd, sys; m = pd.read_csv(sys.argv[1]); print(int((m.faceId == -1).sum()))" "$W"/fnf/session_*/metadata.csv)"
log "face_noface.mov: $none frame(s) without a face, each one row with faceId -1"
[ "$none" -gt 0 ] || { echo "FAIL face_noface.mov: no row with faceId -1"; fail=1; }

log "synthetic two-face video"
"$PY" scripts/reference/two_face_video.py "$W/two.mkv"
quiet "$PY" scripts/reference/multiface_golden.py video "$W/two.mkv" "$W/two.npz"
"$FACEKIT" process "$W/two.mkv" --max-faces 8 --out "$W/two" --store "$W/store" > "$W/two.txt"
id="$(awk '/^session /{print $2}' "$W/two.txt")"
[ -n "$id" ] || die "process printed no session id"
for fmt in hdf5 openface pyfeat; do
  mkdir -p "$W/two-$fmt"
  "$FACEKIT" export "$id" --store "$W/store" --to "$W/two-$fmt" --format "$fmt" > /dev/null 2>&1
done
"$PY" "$CHECK" "$W/two" "$W/two.npz" --ids two-face --loss-frames 15 --h5 "$W/two-hdf5" --openface "$W/two-openface" || fail=1
log "py-feat's own readers on the multi-face openface.csv and pyfeat.csv"
WHEEL="$CACHE/wheels/py-feat/py_feat-2.1.5-py2.py3-none-any.whl"
[ -f "$WHEEL" ] || "$REPO/scripts/fetch-testdata"
"$PY" - "$WHEEL" "$W" "$REPO" <<'PY' || fail=1
import glob, os, sys, tempfile
sys.path.insert(0, os.path.join(sys.argv[3], "scripts", "verify", "interop"))
import pyfeat_loader
wheel, W = sys.argv[1], sys.argv[2]
pyfeat_loader.load(wheel, tempfile.mkdtemp(dir=W))
from feat.utils.io import read_feat, read_openface
import pandas as pd
seed = pd.read_csv(glob.glob(f"{W}/two/session_*/metadata.csv")[0])
keys = list(zip(seed.frameIndex, seed.faceId))
of = read_openface(glob.glob(f"{W}/two-openface/session_*/openface.csv")[0])
pf = read_feat(glob.glob(f"{W}/two-pyfeat/session_*/pyfeat.csv")[0])
bad = []
if list(zip(of["frame"] - 1, of["face_id"])) != keys: bad.append("read_openface: (frame, face_id) differ from the seed rows")
ident = [f"Person_{i}" if i >= 0 else None for i in seed.faceId]
got = [None if pd.isna(x) else x for x in pf["Identity"]]
if list(pf["frame"]) != list(seed.frameIndex) or got != ident: bad.append("read_feat: (frame, Identity) differ from the seed rows")
print(f"read_openface: {len(of)} rows, face_id {sorted(set(int(i) for i in of['face_id']))}; "
      f"read_feat: {len(pf)} rows, Identity {sorted(set(x for x in got if x))}")
for b in bad: print("FAIL " + b)
sys.exit(1 if bad else 0)
PY

log "the same video with --face-loss-frames 5: the returning face is a new face"
"$FACEKIT" process "$W/two.mkv" --max-faces 8 --face-loss-frames 5 --out "$W/two5" --store "$W/store" > /dev/null
"$PY" "$CHECK" "$W/two5" "$W/two.npz" --ids two-face --loss-frames 5 || fail=1

log "negative control: the checker must notice a face left out and an ID that changes"
"$PY" - "$W" <<'PY'
import glob, sys
import pandas as pd
W = sys.argv[1]
for t in ("metadata", "blendshapes", "landmarks"):
    p = glob.glob(f"{W}/two/session_*/{t}.csv")[0]
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    # Drop face 1 in frame 40, and give face 0 another ID from frame 60 on.
    df = df[~((df.frameIndex == "40") & (df.faceId == "1"))]
    df.loc[(df.frameIndex.astype(int) >= 60) & (df.faceId == "0"), "faceId"] = "7"
    df.to_csv(p, index=False)
PY
if "$PY" "$CHECK" "$W/two" "$W/two.npz" --ids two-face > "$W/neg.txt"; then
  cat "$W/neg.txt"; echo "FAIL the checker passed a damaged export"; fail=1
else
  grep -q "is not exported" "$W/neg.txt" && grep -q "left face changed ID" "$W/neg.txt" \
    || { cat "$W/neg.txt"; echo "FAIL the checker did not name both problems"; fail=1; }
fi
[ "$fail" = 0 ] || die "multi-face checks failed"
log "multi-face sessions: all checks passed"
