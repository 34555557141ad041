#!/usr/bin/env bash
# Storage fault: kill -9 a recording at random moments (50 seeded trials). Every session must
# reopen as `interrupted` with every frame of the last completed fsync, and export to CSV and HDF5
# that pandas/h5py read back exactly. Override: TRIALS=200 SEED=7.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
W="$(mktemp -d /tmp/facekit-storage-crash.XXXXXX)"; trap 'rm -rf "$W"' EXIT
"$VENV/bin/python" "$REPO/scripts/verify/storage/crash_trials.py" "$FACEKIT" "$W" --trials "${TRIALS:-50}" --seed "${SEED:-2026}"
