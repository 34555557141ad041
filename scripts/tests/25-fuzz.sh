#!/usr/bin/env bash
# Coverage-guided fuzzing, short: every parser of outside data (scripts/fuzz: TFLite, model file,
# .npy, zip, Y4M, MJPEG, JPEG and PNG stills, session.json, frames/events/depth logs, the kiosk
# config, uevent datagrams, the FAT/exFAT probe) for a few seconds each under libFuzzer and
# AddressSanitizer, from the committed seeds and a fresh corpus. Fails on any crash, and when a
# target executes nothing or shows no coverage (an uninstrumented build). The long campaign is
# `scripts/fuzz` (1,000,000 executions per target). About 1 minute once facekit-fuzz is built;
# the first build of the instrumented binary takes several minutes more.
source "$(dirname "$0")/../lib/common.sh"
cd "$REPO"
corpus=$(mktemp -d); trap 'rm -rf "$corpus"' EXIT
# Logs and crash inputs apart from a campaign's (.cache/fuzz), which may be running.
export FACEKIT_FUZZ_WORK="$CACHE/fuzz-test"
rc=0
out=$(scripts/fuzz --seconds "${FUZZ_TEST_SECONDS:-4}" --jobs 2 --corpus "$corpus" 2>&1) || rc=$?
echo "$out"
[ "$rc" = 0 ] || { log "FAIL: a parser crashed (inputs in $FACEKIT_FUZZ_WORK/artifacts)"; exit 1; }
n=$(echo "$out" | grep -cE '^[a-z0-9-]+ +execs' || true)
targets=$(ls -d scripts/fuzz-seeds/*/ | wc -l)
[ "$n" = "$targets" ] || { log "FAIL: $n of $targets targets reported"; exit 1; }
if echo "$out" | grep -E '^[a-z0-9-]+ +execs' | grep -qE 'execs +(\?|0) |cov +(\?|0) '; then
  log "FAIL: a target executed nothing or has no coverage"; exit 1
fi
log "fuzz: $n targets, no crash"
