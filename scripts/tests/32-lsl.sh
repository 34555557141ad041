#!/usr/bin/env bash
# Lab Streaming Layer with real peers (pylsl 1.18.6 and its liblsl, pinned in
# scripts/sums/pylsl.sha256): `facekit process --lsl` replays testdata/face_noface.mov to a pylsl
# inlet, and a pylsl markers outlet's 100 markers become session events
# (scripts/verify/lsl/lsl_peer.py says what is checked). Everything runs in a private network
# namespace with only loopback up, so no stream reaches or comes from another machine, and
# nothing outlives it. Also: without liblsl, facekit says what to install and runs on.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
LIB="$CACHE/lsl/liblsl.so"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
if [ "$(uname -m)" != x86_64 ]; then echo "SKIP: 32-lsl: the pylsl wheel ships liblsl only for x86_64"; exit 0; fi
[ -f "$LIB" ] && "$VENV/bin/python" -c 'import pylsl' 2>/dev/null || "$REPO/scripts/install-deps"
(cd "$CACHE/lsl" && grep -v '\.whl$' "$REPO/scripts/sums/pylsl.sha256" | sha256sum --quiet -c -) || die "$LIB does not match scripts/sums/pylsl.sha256"
[ -f "$REPO/testdata/face_noface.mov" ] || "$REPO/scripts/fetch-testdata"
command -v unshare >/dev/null && command -v ip >/dev/null || die "unshare and ip are needed (util-linux, iproute2)"
W="$(mktemp -d -t facekit-lsl.XXXXXX)"; trap 'rm -rf "$W"' EXIT
cd "$REPO"

log "facekit without liblsl: one message naming what to install, and the replay still exports"
"$FACEKIT" process testdata/face_noface.mov --out "$W/nolib" --store "$W/nolib-store" --format csv \
  --lsl --lsl-library "$W/no-such-liblsl.so.2" > "$W/nolib.out" 2> "$W/nolib.err" || die "process failed without liblsl: $(tail -3 "$W/nolib.err")"
grep -q "Lab Streaming Layer is off: cannot load .*no-such-liblsl.so.2.*install liblsl" "$W/nolib.err" \
  || die "no clear message without liblsl: $(cat "$W/nolib.err")"
grep -q "^session " "$W/nolib.out" || die "no session exported without liblsl"
echo "PASS: 32-lsl: without liblsl: $(grep -o 'Lab Streaming Layer is off: cannot load [^ ]*' "$W/nolib.err")…; session exported"

log "the face JSON stream: standard output, a FIFO with a reader, a stalled reader, no reader"
"$FACEKIT" process testdata/face_noface.mov --out "$W/json" --store "$W/json-store" --format csv --json-stream - \
  > "$W/stream.jsonl" 2> "$W/json.err" || die "process --json-stream - failed: $(tail -3 "$W/json.err")"
"$VENV/bin/python" "$REPO/scripts/verify/lsl/check_json_stream.py" "$W/stream.jsonl" "$W"/json/session_* \
  || die "the JSON stream on standard output does not match the export"
echo "PASS: 32-lsl: JSON stream on stdout = the export, field by field ($(grep -o 'JSON stream to standard output: [^,]*' "$W/json.err"))"
mkfifo -m 0660 "$W/face.fifo"
timeout 120 cat "$W/face.fifo" > "$W/fifo.jsonl" 2>/dev/null &
reader=$!
"$FACEKIT" process testdata/face_noface.mov --out "$W/json2" --store "$W/json2-store" --format csv --json-stream "$W/face.fifo" \
  > "$W/json2.out" 2> "$W/json2.err" || die "process --json-stream FIFO failed: $(tail -3 "$W/json2.err")"
wait "$reader"
"$VENV/bin/python" "$REPO/scripts/verify/lsl/check_json_stream.py" "$W/fifo.jsonl" "$W"/json2/session_* > /dev/null \
  || die "the JSON stream through a FIFO does not match the export"
echo "PASS: 32-lsl: JSON stream through a FIFO = the export ($(grep -o '[0-9]* of [0-9]* frames written' "$W/json2.err"))"
# A reader that opens the FIFO and never reads: the pipe fills, then lines are dropped and
# counted while tracking goes on.
timeout 150 "$VENV/bin/python" -c 'import os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); time.sleep(120)' "$W/face.fifo" 2>/dev/null &
stalled=$!
trap 'kill "$stalled" 2>/dev/null || true; rm -rf "$W"' EXIT
timeout 120 "$FACEKIT" process testdata/face_noface.mov --out "$W/json3" --store "$W/json3-store" --format csv --json-stream "$W/face.fifo" \
  > "$W/json3.out" 2> "$W/json3.err" || die "process with a stalled FIFO reader failed: $(tail -3 "$W/json3.err")"
kill "$stalled" 2>/dev/null; wait "$stalled" 2>/dev/null || true
dropped=$(sed -n 's/.*frames written, \([0-9]*\) dropped.*/\1/p' "$W/json3.err")
[ "${dropped:-0}" -gt 0 ] || die "a stalled reader: no line was dropped ($(grep 'JSON stream' "$W/json3.err"))"
echo "PASS: 32-lsl: stalled reader: $(grep -o '[0-9]* of [0-9]* frames written, [0-9]* dropped' "$W/json3.err"), the replay finished" \
  "($(grep -o '[0-9.]* ms/frame' "$W/json3.out") tracking; $(grep -o '[0-9.]* ms/frame' "$W/json2.out") with a reader)"
"$FACEKIT" process testdata/face_noface.mov --out "$W/json4" --store "$W/json4-store" --format csv --json-stream "$W/face.fifo" \
  > /dev/null 2> "$W/json4.err" || die "process with an unread FIFO failed: $(tail -3 "$W/json4.err")"
grep -q "0 of 169 frames written, 0 dropped (writer behind), 169 without a reader" "$W/json4.err" \
  || die "no reader: $(grep 'JSON stream' "$W/json4.err")"
echo "PASS: 32-lsl: FIFO without a reader: 169 lines counted unread, the replay finished"

# A socket facekit creates: mode 0660 and the group asked for, every line to a client.
"$FACEKIT" process testdata/face_noface.mov --out "$W/json5" --store "$W/json5-store" --format csv \
  --json-stream "unix:$W/face.sock" --json-group nogroup > "$W/json5.out" 2> "$W/json5.err" &
fk=$!
timeout 120 "$VENV/bin/python" - "$W/face.sock" "$W/sock.jsonl" > "$W/sock.txt" <<'PY' || { kill "$fk" 2>/dev/null || true; die "socket client: $(cat "$W/sock.txt")"; }
import grp, os, socket, stat, sys, time
path, out = sys.argv[1], sys.argv[2]
for _ in range(600):
    if os.path.exists(path): break
    time.sleep(0.05)
st = os.stat(path)
print(f"mode {stat.S_IMODE(st.st_mode):o} group {grp.getgrgid(st.st_gid).gr_name} socket {stat.S_ISSOCK(st.st_mode)}")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path)
with open(out, "wb") as f:
    while True:
        b = s.recv(65536)
        if not b: break
        f.write(b)
PY
wait "$fk" || die "process --json-stream unix: failed: $(tail -3 "$W/json5.err")"
grep -q "mode 660 group nogroup socket True" "$W/sock.txt" || die "the socket is not mode 0660 group nogroup: $(cat "$W/sock.txt")"
"$VENV/bin/python" "$REPO/scripts/verify/lsl/check_json_stream.py" "$W/sock.jsonl" "$W"/json5/session_* --joined-late > "$W/sock-check.txt" \
  || { cat "$W/sock-check.txt"; die "the JSON stream through the socket does not match the export"; }
[ ! -e "$W/face.sock" ] || die "the socket file was left behind"
echo "PASS: 32-lsl: JSON socket: $(cat "$W/sock.txt"), $(head -1 "$W/sock-check.txt"), the rest = the export; removed at exit"

log "LabStreaming and kiosk suites against the pinned liblsl (clock proof, markers over loopback, sender restart, GPIO edges)"
if ls "$REPO"/.build/debug/*PackageTests.xctest >/dev/null 2>&1; then
  if FACEKIT_LSL_LIBRARY="$LIB" unshare -rn sh -c 'ip link set lo up && exec swift test --skip-build --filter "LSLLibraryTests|MarkerLoopbackTests|SlotRingTests|FaceJSONTests|KioskLSLMarkersTests"' \
       > "$W/swift.txt" 2>&1 && grep -q "MarkerLoopbackTests passed" "$W/swift.txt" && grep -q "KioskLSLMarkersTests passed" "$W/swift.txt" && grep -q "localClockIsClockMonotonic() passed" "$W/swift.txt"; then
    echo "PASS: 32-lsl: $(grep -E "Test run with" "$W/swift.txt" | tail -1)"
  else
    grep -E "✘|error" "$W/swift.txt" | head -20; echo "FAIL: 32-lsl: LabStreaming suites"; exit 1
  fi
else
  echo "SKIP: 32-lsl: no test build (swift build --build-tests) for the LabStreaming suites"
fi

log "pylsl peers on loopback in a private network namespace"
mkdir -p "$W/peer"
if unshare -rn sh -c 'ip link set lo up && exec "$0" "$@"' "$VENV/bin/python" "$REPO/scripts/verify/lsl/lsl_peer.py" \
     "$FACEKIT" testdata/face_noface.mov "$W/peer" "$REPO/README.md" --library "$LIB" > "$W/peer.txt" 2>&1; then
  cat "$W/peer.txt"; echo "PASS: 32-lsl: face and marker streams with pylsl"
else
  cat "$W/peer.txt"; echo "FAIL: 32-lsl: face and marker streams with pylsl"; exit 1
fi
