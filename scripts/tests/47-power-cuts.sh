#!/usr/bin/env bash
# Ten power cuts on the emulated board (scripts/board/power-cuts --cuts 10; the 100-cut campaign
# is the same script without --cuts): the kiosk records, stops, exports and marks sessions
# exported while QEMU is kill -9'd at seeded random moments, the data disk on a writeback cache.
# After each cut the next boot must find every session (verified record by record), ≤ 1 s of
# frames lost, no session marked exported that is not complete on a stick, and export them all.
# POWER_CUT_SEED replays a run's moments (every run prints its seed). FACEKIT_BIN overrides the
# binary. One boot per cut, about 25 s each on an idle machine.
source "$(dirname "$0")/../lib/common.sh"
BIN=${FACEKIT_BIN:-$REPO/.build/release/facekit}
if [ ! -x "$BIN" ]; then (cd "$REPO" && swift build -c release 2>&1 | tail -1); fi
OUT="$CACHE/board/power-cuts-10"
t0=$SECONDS; rc=0
"$REPO/scripts/board/power-cuts" --cuts 10 ${POWER_CUT_SEED:+--seed "$POWER_CUT_SEED"} --out "$OUT" --bin "$BIN" \
  > "$CACHE/board/power-cuts-10.log" 2>&1 || rc=$?
grep -E '^\[power-cuts\] power cuts|^(ok  |FAIL) cut|frames lost|phases hit|frames:|cuts passed|went wrong' "$CACHE/board/power-cuts-10.log" || true
if [ "$rc" = 0 ]; then echo "PASS: power cuts: 10 cuts"; else echo "FAIL: power cuts (log: $CACHE/board/power-cuts-10.log)"; fi
log "power cuts: $((SECONDS - t0)) s in all; boots in $OUT"
exit $rc
