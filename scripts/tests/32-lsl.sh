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

log "LabStreaming suites against the pinned liblsl (clock proof, markers over loopback, sender restart)"
if ls "$REPO"/.build/debug/*PackageTests.xctest >/dev/null 2>&1; then
  if FACEKIT_LSL_LIBRARY="$LIB" unshare -rn sh -c 'ip link set lo up && exec swift test --skip-build --filter "LSLLibraryTests|MarkerLoopbackTests|SlotRingTests|FaceJSONTests"' \
       > "$W/swift.txt" 2>&1 && grep -q "MarkerLoopbackTests passed" "$W/swift.txt" && grep -q "localClockIsClockMonotonic() passed" "$W/swift.txt"; then
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
