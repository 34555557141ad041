#!/usr/bin/env bash
# Storage: record synthetic sessions in every vertex mode, export each to CSV, JSON Lines and HDF5,
# and read every export back with pandas and h5py (exact values, names, shapes, timestamps,
# manifest SHA-256). Also: list/delete, and a negative control that the checker catches a change.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
PY="$VENV/bin/python"
CHECK="$REPO/scripts/verify/storage/check_export.py"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
W="$(mktemp -d /tmp/facekit-storage-formats.XXXXXX)"; trap 'rm -rf "$W"' EXIT
STORE="$W/store"
seed=11
for mode in none all all-f16 stride:4-f16 subset:1,33,133,263,362,468; do
  seed=$((seed + 1))
  "$FACEKIT" sessions record-synthetic --store "$STORE" --participant "P$seed" --frames 450 --seed $seed \
      --vertices "$mode" --images-every 40 --events 5 --pause-at 100 --flush-ms 50 > "$W/rec.txt"
  id="$(awk '/^session /{print $2}' "$W/rec.txt")"
  [ -n "$id" ] || die "record-synthetic printed no session id"
  out="$W/out-$seed"; mkdir -p "$out"
  for fmt in csv jsonl hdf5; do
    "$FACEKIT" export "$id" --store "$STORE" --to "$out" --format "$fmt" --images > /dev/null
  done
  ls -d "$out"/session_P${seed}_* > /dev/null || die "no export directory for $id"
  "$PY" "$CHECK" "$out"/session_P${seed}_* --seed $seed --frames 450 --vertices "$mode" --images --events 5
done

log "negative control: the checker must notice one changed value"
one="$(ls -d "$W"/out-15/session_* | head -1)"
sed -i '5s/,0\.[0-9]*,/,0.5,/' "$one/blendshapes.csv"
if "$PY" "$CHECK" "$one" --seed 15 --frames 450 --vertices stride:4-f16 2>/dev/null; then die "checker missed a changed value"; fi

log "list and delete"
"$FACEKIT" sessions list --store "$STORE"
n="$("$FACEKIT" sessions list --store "$STORE" --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')"
[ "$n" = 5 ] || die "expected 5 sessions, listed $n"
victim="$("$FACEKIT" sessions list --store "$STORE" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[2]["sessionID"])')"
"$FACEKIT" sessions delete "$victim" --store "$STORE"
[ ! -e "$STORE/$victim" ] || die "deleted session still on disk"
n="$("$FACEKIT" sessions list --store "$STORE" --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')"
[ "$n" = 4 ] || die "expected 4 sessions after delete, listed $n"
if "$FACEKIT" sessions delete "$victim" --store "$STORE" 2>/dev/null; then die "deleting a missing session succeeded"; fi

log "export --all"
mkdir -p "$W/all"
"$FACEKIT" export --all --store "$STORE" --to "$W/all" --format hdf5
[ "$(ls "$W/all" | wc -l)" = 4 ] || die "export --all did not write 4 exports"
log "ok"
