#!/usr/bin/env bash
# Emulated-board tests: one boot of a real Debian kernel under QEMU/TCG (board/emulated/) with
# vivid, v4l2loopback fed with MJPEG, gpio-sim and a hot-pluggable USB stick; the host-built
# facekit runs inside. Guest tests: capture (vivid YUYV and loopback MJPEG, ≥ 100 frames, rate,
# gaps, timestamps, controls), unplug (unbind/bind during streaming), devices (cameras, GPIO,
# USB stick incl. QMP hot-plug), bench (capture + decode CPU per frame). Then host-side checks.
# Set-up (kernel, modules, initramfs) is cached in .cache/board/<KVER>/ and runs only once.
source "$(dirname "$0")/../lib/common.sh"
BIN=${FACEKIT_BIN:-$REPO/.build/release/facekit}
if [ ! -x "$BIN" ]; then (cd "$REPO" && swift build -c release 2>&1 | tail -1); fi
OUT="$CACHE/board/run"
t0=$SECONDS
rc=0
"$REPO/scripts/board/run" --out "$OUT" --bin "$BIN" > "$CACHE/board/run.log" 2>&1 || rc=1
grep -E 'BOARD: (BEGIN|END|RESULT)|FAIL|HOST: (qemu|TIMEOUT)|\[setup\]|\[mkinitrd\]' "$CACHE/board/run.log" || true
[ "$rc" = 0 ] || log "guest tests failed; console: $OUT/console.log, full log: $CACHE/board/run.log"
python3 "$REPO/scripts/board/check-results.py" "$OUT" || rc=1
log "emulated board: $((SECONDS - t0)) s in all"
exit $rc
