#!/usr/bin/env bash
# The kiosk end to end on the emulated board, two boots sharing a persistent data disk (ext4,
# virtio-blk) that holds the session store, pre-filled with one large recorded session:
#   boot 1 (board/emulated/tests/kiosk.sh): facekit run → READY=1 → gpio-sim button → TTL
#     markers → stop → bouncing button → stick pulled mid-export → next plug exports all →
#     safe-to-remove LED → unplug → record → power cut (QEMU killed)
#   boot 2 (kiosk-recover.sh): the cut session recovered as interrupted, exported at boot;
#     camera unplug/replug; an unformatted stick refused (and left unformatted); SIGTERM → exit 0
# After each boot the host reads the stick image (mtools) and checks the export with h5py/pandas
# (scripts/board/check-kiosk.py). FACEKIT_BIN overrides the binary; BULK_FRAMES the big session.
source "$(dirname "$0")/../lib/common.sh"
BIN=${FACEKIT_BIN:-$REPO/.build/release/facekit}
if [ ! -x "$BIN" ]; then (cd "$REPO" && swift build -c release 2>&1 | tail -1); fi
"$REPO/scripts/board/kiosk-model" "$BIN" || exit 1
OUT=${KIOSK_OUT:-$CACHE/board/kiosk}
PY="$VENV/bin/python"; [ -x "$PY" ] || PY=python3
rm -rf "$OUT"; mkdir -p "$OUT"
t0=$SECONDS
rc=0
# check DESCRIPTION CMD...: one PASS/FAIL line (set -e must not end the script at a failure).
check() { local d=$1; shift; if "$@"; then echo "PASS: kiosk: $d"; else echo "FAIL: kiosk: $d"; rc=1; fi; }

# The data disk: the session store with a session big enough that its export can be interrupted.
W=$(mktemp -d /tmp/facekit-kiosk-data.XXXXXX); trap 'rm -rf "$W"' EXIT
"$BIN" sessions record-synthetic --participant bulk --frames "${BULK_FRAMES:-12000}" --vertices all --speed 1000 \
  --events 3 --store "$W/facekit/sessions" > /dev/null || die "recording the bulk session"
mkfs.ext4 -q -F -d "$W" "$OUT/data.img" 256M || die "mkfs.ext4 -d (e2fsprogs ≥ 1.43)"

stick_dir() {  # stick_dir IMG DIR: the stick's facekit/ folder, copied out with mtools
  rm -rf "$2"; mkdir -p "$2"
  # A damaged FAT can send mcopy round a directory loop: bounded.
  timeout 120 env mtools_skip_check=1 mcopy -s -n -i "$1@@1M" ::facekit "$2/" 2>/dev/null || true
  timeout 60 env mtools_skip_check=1 mdir -a -i "$1@@1M" ::facekit 2>/dev/null | sed 's/^/  stick: /' | head -20 || true
}

boot() {  # boot NAME TEST EXPECTED_EXIT
  local r=0
  "$REPO/scripts/board/run" --tests "$2" --out "$OUT/$1" --bin "$BIN" --data "$OUT/data.img" --sticks 2 > "$OUT/$1.log" 2>&1 || r=$?
  grep -E 'BOARD: (BEGIN|END|RESULT|POWER-CUT)|FAIL|KIOSK: (PHASE|event=(state|export|marker|session|stick|terminating|stopped))|KIOSK-|HOST: (qemu|power|TIMEOUT)' "$OUT/$1.log" || true
  [ "$r" = "$3" ] || return 1
  [ -z "${4:-}" ] || grep -q "$4" "$OUT/$1/console.log"
}

check "boot 1: button, TTL markers, bounce, pulled stick, export, power cut" boot boot1 kiosk 3 'KIOSK: PHASE1 PASS'
stick_dir "$OUT/boot1/usb2.img" "$OUT/stick1"
check "boot 1: the second stick's export (h5py/pandas)" "$PY" "$REPO/scripts/board/check-kiosk.py" first "$OUT/stick1/facekit" "$OUT/boot1/console.log"

check "boot 2: power-cut session recovered and exported, camera replug, SIGTERM" boot boot2 kiosk-recover 0
stick_dir "$OUT/boot2/usb.img" "$OUT/stick2"
check "boot 2: the stick's export (the interrupted session)" "$PY" "$REPO/scripts/board/check-kiosk.py" recovered "$OUT/stick2/facekit" "$OUT/boot2/console.log"
check "boot 2: the unformatted stick was refused and not formatted" "$PY" "$REPO/scripts/board/check-kiosk.py" wiped "$OUT/boot2/usb2.img" "$OUT/boot2/console.log"

log "kiosk board: $((SECONDS - t0)) s in all; logs in $OUT"
exit $rc
