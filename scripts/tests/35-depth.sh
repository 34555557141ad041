#!/usr/bin/env bash
# Depth end to end: a session recorded with the replay depth driver exports /depth that h5py
# reads back bit-exact (and 16-bit PNGs that PIL reads back bit-exact), distance to screen comes
# from depth where a map matched, and bad drivers (a crash, a wrong ABI version, a hang) never take
# facekit down: the session is recorded and exported without depth, and says why.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
BIN="$(dirname "$FACEKIT")"
[ -x "$BIN/facekit-depth-host" ] && [ -f "$BIN/libfacekit-depth-replay.so" ] || die "no depth host/replay driver beside $FACEKIT (swift build builds them)"
PY="$VENV/bin/python"
W="$(mktemp -d /tmp/facekit-depth.XXXXXX)"; trap 'rm -rf "$W"' EXIT
MEDIA="$REPO/testdata/single_face.mp4"
MODEL="$REPO/models/face_landmarker_v2.task"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 40 maps of 160x120 (the video has 72 frames: 40 match, 32 fall back to the iris estimate):
# a plane at 0.60 m with a slope, 5 % holes, and the extremes 1 and 65535 in a corner.
mkdir -p "$W/pgm"
"$PY" - "$W/pgm" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(8)
for i in range(40):
    a = (600 + np.arange(160)[None, :] // 16 + i + np.zeros((120, 1))).astype(np.uint16)
    a[rng.random((120, 160)) < 0.05] = 0
    a[0, 0], a[0, 1] = 1, 65535
    with open(f"{sys.argv[1]}/depth_{i:04d}.pgm", "wb") as f:
        f.write(b"P5\n160 120\n65535\n"); f.write(a.astype(">u2").tobytes())
PY

log "record with the replay driver, export HDF5"
"$FACEKIT" process "$MEDIA" --model "$MODEL" --out "$W/h5" --store "$W/store" --participant D1 --format hdf5 \
  --depth-driver "$BIN/replay" --depth-uri "dir:$W/pgm" --depth-options fps=30,pace=0 --depth-maps everyFrame \
  > "$W/rec.out" 2> "$W/rec.err" || die "facekit process with the replay driver failed: $(cat "$W/rec.err")"
cat "$W/rec.err"
id="$(awk '/^session /{print $2}' "$W/rec.out")"
mkdir -p "$W/csv"
"$FACEKIT" export "$id" --store "$W/store" --to "$W/csv" --format csv > /dev/null || die "CSV export failed"
if "$PY" - "$W" <<'PY'
import glob, sys, numpy as np, h5py, pandas as pd
from PIL import Image
W = sys.argv[1]
fed = np.stack([np.frombuffer(open(p, "rb").read()[-160 * 120 * 2:], dtype=">u2").reshape(120, 160).astype(np.uint16)
                for p in sorted(glob.glob(f"{W}/pgm/*.pgm"))])
bad = []
f = h5py.File(glob.glob(f"{W}/h5/session_*/session.h5")[0], "r")
d = f["depth"]
if d.shape != (40, 120, 160) or d.dtype != np.uint16: bad.append(f"/depth is {d.shape} {d.dtype}")
if d.chunks != (1, 120, 160) or d.compression != "gzip": bad.append(f"/depth chunks {d.chunks} compression {d.compression}")
depth = d[:]
if not np.array_equal(depth, fed): bad.append(f"/depth differs from the fed maps in {int((depth != fed).sum())} samples")
changed = fed.copy(); changed[7, 60, 80] ^= 1
if np.array_equal(depth, changed): bad.append("negative control: a changed sample went unnoticed")
for k, v in {"fx": 97.911095, "cx": 80, "cy": 60, "depth_units": 0.001}.items():
    if abs(float(d.attrs[k][0]) - v) > 1e-4: bad.append(f"/depth attribute {k} = {d.attrs[k]}")
idx = f["depth_frame_indices"][:]
if not np.array_equal(idx, np.arange(40)): bad.append(f"/depth_frame_indices {idx[:5]}...")
gap = f["depth_timestamps"][:] - f["timestamps"][:][idx]
if np.abs(gap).max() > 1 / 60: bad.append(f"depth more than half a frame from its colour frame: {np.abs(gap).max()} s")
src = f["distance_source"][:]
cols = f["metadata"].attrs["columns"].decode().split(",")
meta = f["metadata"][:]
dist = meta[:, cols.index("distanceToScreen")]
tracked = meta[:, cols.index("isFaceTracked")] == 1
if not (src[:40][tracked[:40]] == 2).all(): bad.append(f"matched frames with a face: sources {np.bincount(src[:40])}")
if not (src[40:][tracked[40:]] == 1).all(): bad.append("unmatched frames should use the iris estimate")
# Depth at the eyes: the plane is 600 + x/16 + i mm; the eyes are at x ≈ 60…100 of 160.
exp_lo, exp_hi = 0.600 + np.arange(40) / 1000, 0.610 + np.arange(40) / 1000
dd = dist[:40]
if not ((dd >= exp_lo - 1e-6) & (dd <= exp_hi + 1e-6))[tracked[:40]].all(): bad.append(f"depth distances {dd[:4]} not the plane's")
print(f"h5py: /depth {d.shape} {d.dtype} chunks {d.chunks} {d.compression}; bit-exact {np.array_equal(depth, fed)}; "
      f"sources none/iris/depth {np.bincount(src, minlength=3).tolist()}; distance depth {dd[0]:.4f} m, iris {dist[40]:.4f} m")
# CSV layout: one 16-bit PNG per map, named by its colour frame; the index and the sources.
csv = glob.glob(f"{W}/csv/session_*")[0]
for i in range(40):
    im = np.array(Image.open(f"{csv}/depth/frame_{i:09d}.png"))
    if im.dtype != np.uint16 and im.dtype != np.int32: bad.append(f"PNG {i} decodes as {im.dtype}")
    if not np.array_equal(im.astype(np.uint16), fed[i]): bad.append(f"PNG {i} differs from the fed map"); break
ix = pd.read_csv(f"{csv}/depth.csv")
if list(ix.columns) != ["timestamp", "frameIndex", "depthTimestamp", "depthSequence", "file"] or len(ix) != 40: bad.append("depth.csv")
ds = pd.read_csv(f"{csv}/distance_source.csv")
if len(ds) != 72 or (ds.distanceSource[:40][tracked[:40]] != "depth").any(): bad.append("distance_source.csv")
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
then pass "replay depth: /depth bit-exact via h5py, PNGs bit-exact via PIL, distance from depth where matched"
else fail "replay depth round trip"; fi

log "the session's own depth.log replays byte-identical to what was fed"
"$FACEKIT" depth probe --driver "$BIN/replay" --uri "log:$W/store/$id/depth.log" --options pace=0 --frames 40 \
  --save-pgm "$W/fromlog" > "$W/probe.out" 2>&1 || true
if [ "$(ls "$W/fromlog" 2>/dev/null | wc -l)" = 40 ] && cmp -s <(cat "$W"/pgm/*.pgm) <(cat "$W"/fromlog/*.pgm); then
  pass "replay driver on log:depth.log: 40 maps byte-identical to the fed PGMs ($(sed -n 2p "$W/probe.out"))"
else fail "replaying depth.log: $(cat "$W/probe.out")"; fi

log "bad drivers: facekit keeps recording without depth"
cc -shared -fPIC -O1 -I "$REPO/Sources/CDepthDriver/include" "$REPO/Tests/DepthTests/Drivers/test_driver.c" -o "$W/libcrashy.so"
cc -shared -fPIC -O1 -DWRONG_VERSION -I "$REPO/Sources/CDepthDriver/include" "$REPO/Tests/DepthTests/Drivers/test_driver.c" -o "$W/libold.so"
check_bad() {  # name driver uri expected-stderr
  local name=$1 drv=$2 uri=$3 want=$4
  if "$FACEKIT" process "$MEDIA" --model "$MODEL" --out "$W/$name" --store "$W/store" --participant "$name" --format csv \
       --depth-driver "$drv" --depth-uri "$uri" > "$W/$name.out" 2> "$W/$name.err" \
     && grep -q "$want" "$W/$name.err" && [ "$(tail -n +2 "$W"/$name/session_*/metadata.csv | wc -l)" = 72 ]; then
    pass "$name: facekit exited 0, 72 frames exported, stderr: $(grep -m1 "$want" "$W/$name.err" | cut -c1-150)"
  else
    fail "$name: rc or message wrong: $(cat "$W/$name.err")"
  fi
}
check_bad crash "$W/libcrashy.so" crash "signal 11"
check_bad abi "$W/libold.so" good:5 "ABI version 99"
check_bad missing "$W/nowhere" x "no depth driver 'nowhere'"
check_bad nullframe "$W/libcrashy.so" nullframe "without data (NULL)"
check_bad hang "$W/libcrashy.so" hang "it hangs"
if grep -q "depth off" "$W"/crash/session_*/events.json; then pass "crash: the session's events say depth went off"
else fail "crash: no 'depth off' event in events.json"; fi

[ $fails = 0 ] || die "$fails depth check(s) failed"
log "ok"
