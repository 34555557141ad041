#!/usr/bin/env bash
# OpenFace and py-feat exports, read by py-feat's own code: `facekit process` tracks a video with
# and without a face (testdata/face_noface.mov), the session is exported as the seed's CSV (the
# reference values), --format openface and --format pyfeat. py-feat 2.1.5's read_openface must load
# ours with the columns and dtypes it gives its own OpenFace_Test.csv, read_feat must load
# pyfeat.csv like its Feat_Test.csv, and Fex.plot_detections must draw it. Values are checked
# against the seed's CSV (units, OpenFace's pose convention, the 478→68 table, AU scales), and
# each file against its manifest. py-feat runs from the pinned wheel without torch
# (scripts/verify/interop/pyfeat_loader.py says what is stubbed).
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
WHEEL="$CACHE/wheels/py-feat/py_feat-2.1.5-py2.py3-none-any.whl"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
[ -f "$WHEEL" ] || "$REPO/scripts/fetch-testdata"
want="$(awk '$2 == "py_feat-2.1.5-py2.py3-none-any.whl" {print $1}' "$REPO/scripts/sums/testdata.sha256")"
[ "$(sha256sum "$WHEEL" | cut -d' ' -f1)" = "$want" ] || die "$WHEEL does not match scripts/sums/testdata.sha256"
W="$(mktemp -d /tmp/facekit-openface.XXXXXX)"; trap 'rm -rf "$W"' EXIT
cd "$REPO"
log "process face_noface.mov, export csv, openface, pyfeat"
"$FACEKIT" process testdata/face_noface.mov --out "$W/seed" --store "$W/store" --participant FNF --format csv > "$W/process.txt"
id="$(awk '/^session /{print $2}' "$W/process.txt")"
[ -n "$id" ] || die "process printed no session id"
for fmt in openface pyfeat; do
  mkdir -p "$W/$fmt"
  "$FACEKIT" export "$id" --store "$W/store" --to "$W/$fmt" --format "$fmt" > /dev/null
done
"$VENV/bin/python" "$REPO/scripts/verify/interop/check_openface_pyfeat.py" "$WHEEL" \
  "$W"/seed/session_FNF_* "$W"/openface/session_FNF_* "$W"/pyfeat/session_FNF_*

log "negative control: the checker must notice a wrong unit"
of="$(ls -d "$W"/openface/session_FNF_*)"
sed -i '2s/^\(\([^,]*, \)\{15\}\)[0-9.]*/\11.0/' "$of/openface.csv"   # pose_Tz of the first row, metres
if "$VENV/bin/python" "$REPO/scripts/verify/interop/check_openface_pyfeat.py" "$WHEEL" \
    "$W"/seed/session_FNF_* "$of" "$W"/pyfeat/session_FNF_* > "$W/neg.txt" 2>&1; then
  die "checker missed pose_Tz in metres"
fi
grep -q "FAIL pose_Tz" "$W/neg.txt" || die "checker failed for another reason: $(grep FAIL "$W/neg.txt" | head -3)"
log "ok"
