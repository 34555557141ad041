#!/usr/bin/env bash
# Storage faults on real small filesystems (tmpfs, needs root/CAP_SYS_ADMIN):
#   1. the card fills up while recording: clear error, session consistent and exportable;
#   2. the export target fills up: clear error, nothing under the final name, store untouched;
#   3. the export target vanishes mid-export (lazy unmount): same guarantees.
# Without mount permission this script says so and exits 0: the same faults are injected through
# the syscall layer's fault hook in `swift test` (RecoveryTests, ExportTests).
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
PY="$VENV/bin/python"
CHECK="$REPO/scripts/verify/storage/check_export.py"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
W="$(mktemp -d /tmp/facekit-storage-full.XXXXXX)"
mounts=()
cleanup() { for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
mkdir -p "$W/card" "$W/stick" "$W/stick2" "$W/out"
if ! mount -t tmpfs -o size=3m tmpfs "$W/card" 2>/dev/null; then
  log "SKIPPED: mounting tmpfs is not permitted here; ENOSPC is covered by the injected-fault tests in swift test"
  exit 0
fi
mounts+=("$W/card")
json_field() { "$PY" -c "import json,sys; d=json.load(sys.stdin); print(d[0]['$1'] if d else '')"; }

log "1. recording onto a 3 MB card until it is full"
rc=0
"$FACEKIT" sessions record-synthetic --store "$W/card/store" --participant FULL --frames 1000000 --seed 9 \
    --vertices all --flush-ms 20 > "$W/rec.out" 2> "$W/rec.err" || rc=$?
cat "$W/rec.err" >&2
[ "$rc" = 1 ] || die "recording on a full card exited $rc, expected 1"
grep -q "no space left" "$W/rec.err" || die "no clear disk-full message"
"$FACEKIT" sessions list --store "$W/card/store" > "$W/list.txt" || die "sessions list failed on the full card"
cat "$W/list.txt"
state="$("$FACEKIT" sessions list --store "$W/card/store" --json | json_field state)"
frames="$("$FACEKIT" sessions list --store "$W/card/store" --json | json_field frameCount)"
id="$("$FACEKIT" sessions list --store "$W/card/store" --json | json_field sessionID)"
[ "$state" = stopped ] || die "state after disk full is '$state', expected stopped (the reserve lets session.json be written)"
[ "$frames" -gt 100 ] || die "only $frames frames kept"
"$FACEKIT" sessions list --store "$W/card/store" --json | grep -q "no space left" || die "session.json does not record the error"
for fmt in csv hdf5; do "$FACEKIT" export "$id" --store "$W/card/store" --to "$W/out" --format $fmt > /dev/null; done
"$PY" "$CHECK" "$W"/out/session_FULL_* --seed 9 --frames "$frames" --vertices all

log "2. exporting onto a 1 MB stick"
"$FACEKIT" sessions record-synthetic --store "$W/store" --participant BIG --frames 8000 --seed 4 --vertices all-f16 > /dev/null
big="$("$FACEKIT" sessions list --store "$W/store" --json | json_field sessionID)"
before="$(sha256sum "$W/store/$big/frames.log" "$W/store/$big/events.log" "$W/store/$big/session.json")"
mount -t tmpfs -o size=1m tmpfs "$W/stick"; mounts+=("$W/stick")
for fmt in csv jsonl hdf5; do
  rc=0; "$FACEKIT" export "$big" --store "$W/store" --to "$W/stick" --format $fmt > /dev/null 2> "$W/exp.err" || rc=$?
  cat "$W/exp.err" >&2
  [ "$rc" = 1 ] || die "export $fmt onto a full stick exited $rc"
  grep -q "full" "$W/exp.err" || die "export $fmt: no clear target-full message"
  [ -z "$(ls -A "$W/stick")" ] || die "export $fmt left files on the stick: $(ls -A "$W/stick")"
done
[ "$(sha256sum "$W/store/$big/frames.log" "$W/store/$big/events.log" "$W/store/$big/session.json")" = "$before" ] || die "the store changed"

log "3. the stick vanishes mid-export (lazy unmount)"
"$FACEKIT" sessions record-synthetic --store "$W/store3" --participant LONG --frames 20000 --seed 5 --vertices all > /dev/null
long="$("$FACEKIT" sessions list --store "$W/store3" --json | json_field sessionID)"
before="$(sha256sum "$W/store3/$long/frames.log")"
for fmt in csv hdf5; do
  mount -t tmpfs -o size=1g tmpfs "$W/stick2"; mounts+=("$W/stick2")
  "$FACEKIT" export "$long" --store "$W/store3" --to "$W/stick2" --format $fmt > /dev/null 2> "$W/van.err" &
  pid=$!
  for _ in $(seq 1 200); do ls -A "$W/stick2" | grep -q partial && break; sleep 0.02; done
  sleep 0.2
  umount -l "$W/stick2"
  rc=0; wait $pid || rc=$?
  cat "$W/van.err" >&2
  [ "$rc" = 1 ] || die "export $fmt onto a vanishing stick exited $rc"
  grep -qE "vanished|No such file|no such file" "$W/van.err" || die "export $fmt: no clear message about the vanished target"
  [ -z "$(ls -A "$W/stick2")" ] || die "export $fmt left something under the mount point"
done
[ "$(sha256sum "$W/store3/$long/frames.log")" = "$before" ] || die "the store changed"
log "ok"
