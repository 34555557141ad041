#!/usr/bin/env bash
# The stick's worst cases on the emulated board, one boot (board/emulated/tests/stick-cases.sh):
# a stick too full for the export, a write-protected one, one with garbage FATs, a second stick
# plugged and pulled during an export, a stick pulled mid-export and put back, and one already
# holding a forged export, a foreign partial folder, a file with the export's name and odd names.
# Each must end with the card intact, a clear kiosk state and LEDs, and no session marked
# exported that is not complete on that stick: the host reads every stick image with mtools and
# checks each marker's export against its manifest (scripts/board/check-stick-cases.py).
# FAT has no symbolic links (and the kiosk mounts only FAT and exFAT), so a stick cannot hold any.
source "$(dirname "$0")/../lib/common.sh"
BIN=${FACEKIT_BIN:-$REPO/.build/release/facekit}
if [ ! -x "$BIN" ]; then (cd "$REPO" && swift build -c release 2>&1 | tail -1); fi
"$REPO/scripts/board/kiosk-model" "$BIN" || exit 1
OUT=${STICK_CASES_OUT:-$CACHE/board/stick-cases}
PY="$VENV/bin/python"; [ -x "$PY" ] || PY=python3
rm -rf "$OUT"; mkdir -p "$OUT/prep"
t0=$SECONDS
W=$(mktemp -d -t facekit-stick-cases.XXXXXX); trap 'rm -rf "$W"' EXIT
M() { mtools_skip_check=1 "$@"; }

# The card: two small sessions and a large one (its export takes seconds on the board).
S="$W/facekit/sessions"
for p in A1 A2; do "$BIN" sessions record-synthetic --participant $p --frames 60 --vertices none --store "$S" > /dev/null; done
"$BIN" sessions record-synthetic --participant bulk --frames "${BULK_FRAMES:-12000}" --vertices none --speed 1000 \
  --events 3 --store "$S" > /dev/null || die "recording the sessions"
mkfs.ext4 -q -F -d "$W" "$OUT/data.img" 128M || die "mkfs.ext4 -d (e2fsprogs ≥ 1.43)"
A1=$(ls "$S" | grep '^A1-'); DAY=$(date -u +%Y-%m-%d)

# full: 40 MiB, all but 1 MiB taken by a file: the small sessions fit, the large one does not.
P="$OUT/prep"
"$REPO/scripts/board/mkstick" "$P/full.img" 40
free=$(M minfo -i "$P/full.img@@1M" :: | sed -n 's/^free clusters=//p'); csize=512
truncate -s $(( free * csize - (1 << 20) )) "$W/filler.bin"; M mcopy -i "$P/full.img@@1M" "$W/filler.bin" ::FILLER.BIN
# readonly: a fresh stick on a write-protected drive; kept to compare afterwards.
"$REPO/scripts/board/mkstick" "$P/readonly.img"
# corrupt: both FATs overwritten with random bytes past the two reserved entries.
"$REPO/scripts/board/mkstick" "$P/corrupt.img"
python3 - "$P/corrupt.img" <<'PY'
import random, struct, sys
f = open(sys.argv[1], "r+b"); base = 1 << 20
f.seek(base); bs = f.read(512)
bps, = struct.unpack_from("<H", bs, 11); reserved, = struct.unpack_from("<H", bs, 14)
nfats = bs[16]; fatsz, = struct.unpack_from("<I", bs, 36)
rng = random.Random(48)
for k in range(nfats):
    f.seek(base + (reserved + k * fatsz) * bps + 8)
    f.write(bytes(rng.randrange(256) for _ in range(min(fatsz * bps - 8, 64 << 10))))
PY
# hostile: a forged export of A1 (the sizes its manifest claims, other bytes), a folder shaped
# like a partial export holding someone's file, a file named as A2's export would be, odd names.
"$REPO/scripts/board/mkstick" "$P/hostile.img"
mkdir -p "$W/forged"; head -c 4096 /dev/urandom > "$W/forged/session.h5"; echo '{"forged": true}' > "$W/forged/session.json"
python3 - "$W/forged" "$A1" <<'PY'
import json, os, sys
d, sid = sys.argv[1], sys.argv[2]
files = [{"path": n, "size": os.path.getsize(os.path.join(d, n)), "sha256": "0" * 64} for n in ("session.json", "session.h5")]
json.dump({"formatVersion": 1, "sessionID": sid, "participant": "A1", "format": "hdf5", "frameCount": 60,
           "eventCount": 0, "createdAt": "2026-01-01T00:00:00Z", "files": files}, open(os.path.join(d, "manifest.json"), "w"))
PY
echo "someone's notes" > "$W/precious.txt"; echo "not an export" > "$W/namesake.txt"
H="$P/hostile.img@@1M"
M mmd -i "$H" ::facekit ::facekit/session_A1_forged "::facekit/.session_A2_$DAY.partial-99999-1"
M mcopy -i "$H" "$W/forged/session.json" "$W/forged/session.h5" "$W/forged/manifest.json" ::facekit/session_A1_forged/
M mcopy -i "$H" "$W/precious.txt" "::facekit/.session_A2_$DAY.partial-99999-1/precious.txt"
M mcopy -i "$H" "$W/namesake.txt" "::facekit/session_A2_$DAY"
M mcopy -i "$H" "$W/precious.txt" "::facekit/notes; with=odd [chars] & spaces.txt"
M mcopy -i "$H" "$W/forged/manifest.json" ::facekit/manifest.json
cp -r "$W/forged" "$P/forged"; cp "$W/precious.txt" "$W/namesake.txt" "$P/"

rc=0
"$REPO/scripts/board/run" --tests stick-cases --out "$OUT/boot" --bin "$BIN" --data "$OUT/data.img" --sticks 8 \
  --stick "2:$P/full.img" --stick "3:$P/readonly.img:ro" --stick "4:$P/corrupt.img" --stick "8:$P/hostile.img" \
  > "$OUT/boot.log" 2>&1 || rc=$?
grep -E 'BOARD: (BEGIN|END|RESULT)|FAIL|STICK-(CASE|ERROR|EXPORT)|HOST: (qemu|TIMEOUT)' "$OUT/boot.log" | cut -c1-300 || true
[ "$rc" = 0 ] || log "the guest's checks failed (console: $OUT/boot/console.log)"
"$PY" "$REPO/scripts/board/check-stick-cases.py" "$OUT/boot" "$P" || rc=1
log "stick cases: $((SECONDS - t0)) s in all; logs in $OUT"
exit $rc
