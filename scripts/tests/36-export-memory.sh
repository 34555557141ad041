#!/usr/bin/env bash
# Every export format streams: `facekit bench storage` records a 2-hour session (30 fps, all 478
# landmarks), then `facekit export` writes it in each format (hdf5, csv, jsonl, openface, pyfeat,
# bids) under /usr/bin/time -v. Each export's peak RSS must stay at or under 96 MiB, whatever the
# session's length, and each must print its progress lines (a line per tenth of the records).
# The export times, as a fraction of the session's duration, are printed for the record; they
# are not asserted (the machine's speed is not the product's). A memory bound, not a timing test.
# EXPORT_MEMORY_HOURS shortens the session for a quick run (the bound does not depend on it).
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
HOURS="${EXPORT_MEMORY_HOURS:-2}"
LIMIT_KIB=$((96 * 1024))
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt package time)"
W="$(mktemp -d -t facekit-export-memory.XXXXXX)"; trap 'rm -rf "$W"' EXIT

log "record a ${HOURS}-hour session (bench storage, paced at 60x)"
"$FACEKIT" bench storage --hours "$HOURS" --speed 60 --store "$W/bench" --keep --json > "$W/bench.json"
id="$(ls "$W/bench/store" | head -1)"
[ -n "$id" ] || die "bench storage left no session"
frames="$("$VENV/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$W/bench.json")"
seconds="$("$VENV/bin/python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["frames"] / d["fps"])' "$W/bench.json")"
log "session $id: $frames frames, $seconds s"

fail=0
for fmt in hdf5 csv jsonl openface pyfeat bids; do
  mkdir "$W/out-$fmt"
  /usr/bin/time -v -o "$W/time-$fmt.txt" "$FACEKIT" export "$id" --store "$W/bench/store" --to "$W/out-$fmt" --format "$fmt" \
    > "$W/export-$fmt.txt" 2> "$W/progress-$fmt.txt" || die "export --format $fmt failed: $(tail -3 "$W/progress-$fmt.txt")"
  rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time-$fmt.txt")"
  wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$W/time-$fmt.txt")"
  secs="$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')"
  lines="$(grep -c '^export: [0-9]*/[0-9]* records' "$W/progress-$fmt.txt" || true)"
  bytes="$(du -sb "$W/out-$fmt" | cut -f1)"
  awk -v f="$fmt" -v r="$rss" -v t="$secs" -v d="$seconds" -v b="$bytes" -v l="$lines" 'BEGIN {
    printf "%-9s peak RSS %6.1f MiB  export %7.1f s = %.4f of the session  %6d MB  %s progress lines\n", f, r / 1024, t, t / d, b / 1e6, l }'
  [ "$rss" -le "$LIMIT_KIB" ] || { log "FAIL $fmt: peak RSS $rss KiB > $LIMIT_KIB KiB"; fail=1; }
  [ "$lines" -ge 10 ] || { log "FAIL $fmt: $lines progress lines, expected at least 10"; fail=1; }
  grep -q "^export: $frames/$frames records (100%)" "$W/progress-$fmt.txt" || { log "FAIL $fmt: no final progress line"; fail=1; }
  rm -rf "$W/out-$fmt"
done
[ "$fail" = 0 ] || die "an export format does not stream"
log "ok"
