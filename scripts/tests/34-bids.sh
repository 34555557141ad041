#!/usr/bin/env bash
# BIDS export, checked by the BIDS validator: three sessions of two participants (`facekit process`
# of a real video, a synthetic session with markers, and `facekit process` of a group photo with
# --max-faces 8, a multi-face session: a motion file per face) go into one dataset with
# `facekit export --all --format bids`, which grows as sessions are added. bids-validator-deno
# (pinned in requirements-verify.txt, run by the pinned deno wheel, offline in its own network
# namespace) must report 0 errors on every row. scripts/verify/bids/check_bids.py then reads the
# dataset as analysis code would and compares it with the seed CSV export of the same sessions.
# Re-exporting must leave every file byte-identical; a dataset with a required key removed
# must fail the validator (the negative control).
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
VALIDATOR="$VENV/bin/bids-validator-deno"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
[ -x "$VALIDATOR" ] || die "no $VALIDATOR (scripts/install-deps installs it)"
W="$(mktemp -d -t facekit-bids.XXXXXX)"; trap 'rm -rf "$W"' EXIT
cd "$REPO"

# The validator runs without a network, as it must on a lab's offline machine.
validate() {
  local out="$1"; shift
  local rc=0
  unshare -rn "$VALIDATOR" --format json --max-rows -1 "$@" > "$out" 2> "$out.err" || rc=$?
  # 0: no errors, 16: errors found; anything else is the validator failing to run.
  [ "$rc" = 0 ] || [ "$rc" = 16 ] || [ -s "$out" ] || die "the validator did not run (exit $rc): $(tail -3 "$out.err")"
}

log "three sessions, two participants"
"$FACEKIT" process testdata/face_noface.mov --out "$W/seed" --store "$W/store" --participant P01 --format csv > /dev/null
"$FACEKIT" sessions record-synthetic --participant P01 --frames 450 --events 4 --store "$W/store" --speed 50 > /dev/null
"$FACEKIT" process testdata/multi_face.jpg --max-faces 8 --out "$W/seed" --store "$W/store" --participant G-2 --format csv > /dev/null
synthetic="$("$FACEKIT" sessions list --store "$W/store" | awk '/participant=P01/ && /frames=450/ {print $1}')"
[ -n "$synthetic" ] || die "the synthetic session is not listed"
"$FACEKIT" export "$synthetic" --store "$W/store" --to "$W/seed" --format csv > /dev/null

log "export to BIDS: one session first, then --all (the dataset grows)"
mkdir "$W/ds"
"$FACEKIT" export "$synthetic" --store "$W/store" --to "$W/ds" --format bids > "$W/one.txt" 2> "$W/one.err"
grep -q "^export: 450/450 records (100%)" "$W/one.err" || die "no export progress lines: $(cat "$W/one.err")"
"$FACEKIT" export --all --store "$W/store" --to "$W/ds" --format bids > "$W/all.txt" 2> /dev/null
cat "$W/all.txt" >&2
[ "$(grep -c ' -> ' "$W/all.txt")" = 3 ] || die "export --all did not export three sessions"
[ "$(ls -d "$W"/ds/sub-*/ses-* | wc -l)" = 3 ] || die "expected 3 session directories: $(ls -d "$W"/ds/sub-*/ses-*)"
ls -d "$W"/ds/sub-G2x*/ses-1 > /dev/null || die "participant G-2 did not get a hashed label"
# The group photo is a multi-face session: a motion file per face, the face IDs in the physio rows.
faces="$(ls "$W"/ds/sub-G2x*/ses-1/motion/*_acq-face*_motion.tsv 2>/dev/null | wc -l)"
[ "$faces" -ge 2 ] || die "multi_face.jpg --max-faces 8 gave $faces per-face motion files, expected 2 or more"
ids="$(zcat "$W"/ds/sub-G2x*/ses-1/beh/*_physio.tsv.gz | cut -f3 | sort -u | wc -l)"
[ "$ids" = "$faces" ] || die "the group photo's physio rows have $ids face IDs, its motion files $faces faces"

log "validate (offline, every row)"
validate "$W/report.json" "$W/ds"
"$VENV/bin/python" scripts/verify/bids/check_bids.py "$W/ds" "$W/report.json" "$W"/seed/session_*

log "re-export: every file byte-identical (manifests and reports included)"
(cd "$W/ds" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$W/before.sha"
"$FACEKIT" export --all --store "$W/store" --to "$W/ds" --format bids > /dev/null 2>&1
(cd "$W/ds" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$W/after.sha"
cmp -s "$W/before.sha" "$W/after.sha" || die "a re-export changed the dataset: $(diff "$W/before.sha" "$W/after.sha" | head -5)"
[ "$(find "$W/ds" -name '.*' | wc -l)" = 0 ] || die "hidden leftovers in the dataset: $(find "$W/ds" -name '.*')"

log "negative control: a physio sidecar without SamplingFrequency must fail the validator"
cp -r "$W/ds" "$W/bad"
side="$(ls "$W"/bad/sub-P01/ses-1/beh/*_physio.json)"
"$VENV/bin/python" -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); del d["SamplingFrequency"]; json.dump(d, open(p, "w"))' "$side"
validate "$W/bad.json" "$W/bad"
if "$VENV/bin/python" scripts/verify/bids/check_bids.py "$W/bad" "$W/bad.json" "$W"/seed/session_* > "$W/neg.txt" 2>&1; then
  die "the validator accepted a physio sidecar without SamplingFrequency"
fi
grep -q "FAIL validator" "$W/neg.txt" || die "the negative control failed for another reason: $(grep FAIL "$W/neg.txt")"
log "ok"
