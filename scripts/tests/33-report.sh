#!/usr/bin/env bash
# The quality report in a real browser: `facekit process` tracks a real video (a face, then none), `facekit export`
# exports the session again, and headless Chromium (Debian's) renders each report.html to a PNG
# with no network at all (its own network namespace, a throwaway profile). A second session,
# recorded synthetically with markers and images, goes through `facekit report`.
# scripts/verify/report/check_report.py parses each HTML with html.parser (19 plots, the markers
# in every AU timeline, no script, nothing fetched, the manifest's SHA-256) and checks each PNG
# is a rendered page, not blank. The HTML and PNGs are kept in .cache/report/ to look at.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
CHROMIUM="$(command -v chromium || true)"
[ -n "$CHROMIUM" ] || die "chromium is not installed (scripts/install-deps installs it)"
OUT="$CACHE/report"
W="$(mktemp -d -t facekit-report.XXXXXX)"; trap 'rm -rf "$W"' EXIT
rm -rf "$OUT"; mkdir -p "$OUT"
cd "$REPO"

occurrences() { grep -o "$1" "$2" | wc -l || true; }

# render HTML PNG: a full-page screenshot, 1100 px wide, as tall as the page needs.
render() {
  local html="$1" png="$2" height
  # Chromium's --screenshot takes the window, not the document: a window taller than the page
  # (its plots, table rows and thumbnails counted generously), whose white bottom the checker cuts.
  height=$(( 3000 + $(occurrences '<tr>' "$html") * 30 + $(occurrences 'data:image/jpeg' "$html") * 20 ))
  [ "$height" -le 16000 ] || height=16000
  local args=(--headless --disable-gpu --hide-scrollbars --no-first-run --no-default-browser-check
              --disable-background-networking --disable-component-update --disable-sync --disable-extensions
              --disable-default-apps --disable-crash-reporter --proxy-server=127.0.0.1:9
              --user-data-dir="$W/profile" --window-size=1100,"$height" --screenshot="$png" "file://$html")
  # Chromium's sandbox needs user namespaces it cannot have as root.
  [ "$(id -u)" != 0 ] || args=(--no-sandbox "${args[@]}")
  # No network: a namespace with only a loopback that is down, when the kernel allows one.
  local ns=()
  unshare -rn true 2>/dev/null && ns=(unshare -rn)
  HOME="$W/home" XDG_CONFIG_HOME="$W/home/.config" XDG_CACHE_HOME="$W/home/.cache" \
    timeout 120 "${ns[@]}" "$CHROMIUM" "${args[@]}" > "$W/chromium.log" 2>&1 \
    || { tail -20 "$W/chromium.log" >&2; die "chromium failed rendering $html"; }
  [ -s "$png" ] || { tail -20 "$W/chromium.log" >&2; die "chromium wrote no screenshot of $html"; }
  rm -rf "$W/profile"
}

log "process face_noface.mov (csv), then export the session again as hdf5"
"$FACEKIT" process testdata/face_noface.mov --out "$W/process" --store "$W/store" --participant RPT > "$W/process.txt"
id="$(awk '/^session /{print $2}' "$W/process.txt")"
[ -n "$id" ] || die "process printed no session id"
mkdir -p "$W/export"
"$FACEKIT" export "$id" --store "$W/store" --to "$W/export" --format hdf5 > /dev/null
p="$(ls -d "$W"/process/session_RPT_*)"; e="$(ls -d "$W"/export/session_RPT_*)"
cmp -s "$p/report.html" "$e/report.html" || die "process and export wrote different reports of one session"
cp "$e/report.html" "$OUT/video-report.html"
render "$OUT/video-report.html" "$OUT/video-report.png"
"$VENV/bin/python" scripts/verify/report/check_report.py "$OUT/video-report.html" "$OUT/video-report.png" --manifest "$e" --crop
model="$(sha256sum models/face_landmarker_v2.task | cut -d' ' -f1)"   # the model process uses by default
grep -q "<td>$model</td>" "$OUT/video-report.html" || die "the report does not give the model file's SHA-256 ($model)"

log "a synthetic session with 4 markers and images: facekit report"
"$FACEKIT" sessions record-synthetic --store "$W/store" --participant SYN --frames 3000 --events 4 \
  --images-every 150 --vertices none > "$W/synth.txt"
sid="$(awk '/^session /{print $2}' "$W/synth.txt")"
"$FACEKIT" report "$sid" --store "$W/store" --out "$W/synth" > /dev/null
cp "$W/synth/report.html" "$OUT/synthetic-report.html"
render "$OUT/synthetic-report.html" "$OUT/synthetic-report.png"
"$VENV/bin/python" scripts/verify/report/check_report.py "$OUT/synthetic-report.html" "$OUT/synthetic-report.png" --events 4 --thumbnails --crop

log "negative control: a report with a plot missing must fail the check"
sed 's/<svg class="plot" id="au-au26"/<svg class="gone" id="au-au26"/' "$OUT/synthetic-report.html" > "$W/broken.html"
if "$VENV/bin/python" scripts/verify/report/check_report.py "$W/broken.html" "$OUT/synthetic-report.png" --events 4 > "$W/neg.txt" 2>&1; then
  die "the checker missed a missing plot"
fi
grep -q "FAIL.*plots" "$W/neg.txt" || die "the checker failed for another reason: $(cat "$W/neg.txt")"
log "ok (artefacts in $OUT)"
