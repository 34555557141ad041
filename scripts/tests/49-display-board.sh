#!/usr/bin/env bash
# The kiosk's HDMI status screen on the emulated board (board/emulated/tests/kiosk-display.sh):
# QEMU's bochs display driven through KMS by `facekit run` with display.enabled, a face clip as
# the camera (v4l2loopback MJPEG), screenshots of every state taken with QMP screendump and
# checked by content (scripts/board/check-display.py); without a monitor driver the kiosk runs
# and says so once. The screenshots are kept in .cache/board/display/run/screens/ for a person
# to look at. Also: the display's CPU cost per second on this machine, from `facekit display
# --demo` drawing into memory at 10 Hz (1920x1080, the release build).
source "$(dirname "$0")/../lib/common.sh"
BIN=${FACEKIT_BIN:-$REPO/.build/release/facekit}
if [ ! -x "$BIN" ]; then (cd "$REPO" && swift build -c release 2>&1 | tail -1); fi
"$REPO/scripts/board/kiosk-model" "$BIN" || exit 1
OUT=${DISPLAY_OUT:-$CACHE/board/display}
MEDIA="$CACHE/board/media"
PY="$VENV/bin/python"; [ -x "$PY" ] || PY=python3
rm -rf "$OUT"; mkdir -p "$OUT" "$MEDIA"
rc=0
check() { local d=$1; shift; if "$@"; then echo "PASS: display: $d"; else echo "FAIL: display: $d"; rc=1; fi; }
t0=$SECONDS

# The camera: single_face.mp4 cropped to 4:3 and scaled to 640x480, as MJPEG for the loopback feeder.
CLIP="$MEDIA/face-640x480.mjpeg"
if [ ! -s "$CLIP" ]; then
  ffmpeg -nostdin -hide_banner -loglevel error -y -i "$TESTDATA/single_face.mp4" -vf crop=480:360,scale=640:480 \
    -c:v mjpeg -q:v 4 -pix_fmt yuvj420p -f mjpeg "$CLIP.tmp" && mv "$CLIP.tmp" "$CLIP" || die "making $CLIP"
fi
# Where the face is in the clip: the landmark box of every frame, tracked on the host.
W=$(mktemp -d -t facekit-display.XXXXXX); trap 'rm -rf "$W"' EXIT
"$BIN" process "$CLIP" --out "$W/clip" --format csv --vertices all --store "$W/store" > /dev/null || die "tracking the clip on the host"
"$PY" - "$W/clip" > "$OUT/expected.json" <<'PYEOF' || die "reading the clip's landmarks"
import csv, glob, json, statistics, sys
rows = list(csv.DictReader(open(glob.glob(sys.argv[1] + "/*/landmarks.csv")[0])))
boxes = []
for r in rows:
    xs = [float(r[f"v{i}.x"]) for i in range(468)]; ys = [float(r[f"v{i}.y"]) for i in range(468)]
    boxes.append((min(xs), min(ys), max(xs), max(ys)))
print(json.dumps({"box": [statistics.median(b[k] for b in boxes) for k in range(4)], "frames": len(boxes)}))
PYEOF
echo "  the clip's face (median landmark box): $(cat "$OUT/expected.json")"

# The data disk with a large recorded session (a visible export), and a blank stick.
"$BIN" sessions record-synthetic --participant bulk --frames "${BULK_FRAMES:-6000}" --vertices all --speed 1000 \
  --events 3 --store "$W/data/facekit/sessions" > /dev/null || die "recording the bulk session"
mkfs.ext4 -q -F -d "$W/data" "$OUT/data.img" 256M || die "mkfs.ext4 -d"
truncate -s 64M "$OUT/blank.img"

r=0
"$REPO/scripts/board/run" --tests kiosk-display --out "$OUT/run" --bin "$BIN" --data "$OUT/data.img" --sticks 3 \
  --stick "3:$OUT/blank.img" --display 1280x720 > "$OUT/run.log" 2>&1 || r=$?
grep -E 'BOARD: (BEGIN|END|RESULT)|FAIL|KIOSK-DISPLAY|KIOSK: .*event=(state|display)|HOST: (SCREENDUMP|qemu|TIMEOUT)' "$OUT/run.log" || true
check "kiosk with the display: no monitor said once, then every state on the screen" test "$r" = 0
check "screenshots by content" "$PY" "$REPO/scripts/board/check-display.py" "$OUT/run/screens" "$OUT/expected.json"
ls "$OUT/run/screens/"*.png 2>/dev/null | sed 's/^/  screenshot: /'

# The display's cost on this machine: drawing a 1080p screen at 10 Hz with a tracked video.
# The fixed-point model: scripts/setup's conversion, or the one kiosk-model made (a fresh checkout
# running only the tests has no models/facekit.fkm).
MODEL="$MODELS/facekit.fkm"; [ -f "$MODEL" ] || MODEL="$CACHE/board/kiosk-model.fkm"
"$BIN" display --demo --backend memory --size 1920x1080 --seconds 10 --rate 10 --model "$MODEL" \
  --media "$TESTDATA/single_face.mp4" > "$OUT/demo.log" 2>&1 || rc=1
cat "$OUT/demo.log"
share=$(sed -n 's/.* = \([0-9.]*\) % of one core.*/\1/p' "$OUT/demo.log")
echo "  display CPU at 10 Hz, 1920x1080: ${share:-?} % of one core (a cost figure, not a timed check)"
log "display board: $((SECONDS - t0)) s; screenshots in $OUT/run/screens"
exit $rc
