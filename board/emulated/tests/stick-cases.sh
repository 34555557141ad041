# The stick's worst cases, one boot (scripts/tests/48-stick-cases.sh; needs --data and --sticks 8
# with the images that script prepares). The card holds two small sessions and a large one (its
# export takes seconds). Cases, each on its own stick:
#   full       (stick2) a small stick almost full: the large session does not fit
#   readonly   (stick3) the drive is write-protected
#   corrupt    (stick4) the FAT tables are garbage
#   twosticks  (stick5 + stick6) a second stick arrives mid-export and is pulled again: the
#              first stick's export must go on to the end
#   pulled     (stick7) pulled mid-export, then the same stick put back
#   hostile    (stick8) a stick already holding a forged export of a session, a foreign
#              partial-looking folder, a file with the export's name and odd names
# After each: the card's session files unchanged, a clear state and LEDs (error + error LED for a
# refused or failed stick, ready + safe-to-remove after a good export), and no session marked
# exported unless this boot's export ended well. The markers each case left are printed
# (STICK-MARKERS) and then removed, so the next case has the same sessions to export; the host
# checks each marker against that case's stick image (scripts/board/check-stick-cases.py).
. "/host$REPO/board/emulated/tests/kiosk-lib.sh"
waitfor present /sys/block/sda/sda1 100 && stick_out u0
[ "$(ls $STORE | wc -l)" = 3 ] || fail "the data disk should hold three sessions: $(ls $STORE)"
kiosk_start
state ready 1 600
rc=0
result() { if [ "$2" = 0 ]; then echo "STICK-CASE: $1 PASS"; else echo "STICK-CASE: $1 FAIL: $3"; rc=1; fi; }
# The card's session files without the markers: must never change.
card() { (cd $STORE && find . -type f ! -name exported.json | sort | xargs md5sum); }
marked() { ls $STORE/*/exported.json 2>/dev/null | wc -l; }
# print_markers CASE: each marker for the host, then removed (the next case exports again).
print_markers() {
  for m in $STORE/*/exported.json; do
    [ -e "$m" ] || continue
    echo "STICK-MARKERS: case=$1 session=$(basename $(dirname $m)) marker=$(tr -d '\n ' < $m)"
    rm -f "$m"
  done
  sync
}
# ends N PATTERN TENTHS: waits until the kiosk has logged PATTERN N times.
ends() {
  i=0; while [ "$(count "$2")" -lt "$1" ] && [ $i -lt "$3" ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(count "$2")" -ge "$1" ]
}
exports_ended() { echo $(( $(count 'event=export.done') + $(count 'event=export.failed') )); }
card > $RUN/card

# refused CASE STICK DRIVE ID MESSAGE: a stick the export must fail on, with MESSAGE in the error.
refused() {
  local n=$(exports_ended) errs=$(count 'event=state from=[^ ]* to=error-export$') why=""
  stick_in $4 $3
  ends $((n + 1)) 'event=export.\(done\|failed\)' 900 || why="no end of the export"
  [ -z "$why" ] && { grep 'event=export.failed' $RUN/kiosk.log | tail -1 | grep -q "$5" || why="not the expected error: $(grep 'event=export\.' $RUN/kiosk.log | tail -1)"; }
  [ -z "$why" ] && { [ "$(count 'event=state from=[^ ]* to=error-export$')" -gt $errs ] || why="no error-export state"; }
  [ -z "$why" ] && { lit_within $LED_ERROR 3 || why="error LED never lit"; }
  [ -z "$why" ] && { [ "$(led $LED_SAFE)" = 0 ] || why="safe-to-remove lit for a failed export"; }
  [ -z "$why" ] && { [ "$(marked)" = 0 ] || why="$(marked) sessions marked exported"; }
  card > $RUN/card-now; cmp -s $RUN/card $RUN/card-now || why="${why:-the card changed}"
  grep 'event=export.failed' $RUN/kiosk.log | tail -1 | sed "s/^/STICK-ERROR: case=$1 /"
  stick_out $4
  print_markers $1
  result $1 "${why:+1}${why:-0}" "$why"
}
refused full stick2 stick2 u2 'is full'
refused readonly stick3 stick3 u3 'read-only'
# A damaged FAT: the kernel finds it mid-write (and makes the filesystem read-only) or the mount
# fails; either way the export fails and says the stick is to blame.
refused corrupt stick4 stick4 u4 'stick\|damaged\|read-only'

# good CASE: the export that just ended went well: ready, safe-to-remove, no error LED, all marked.
good() {
  local why=""
  sleep 0.3
  grep 'event=state ' $RUN/kiosk.log | tail -1 | grep -q 'to=ready$' || why="state: $(grep 'event=state ' $RUN/kiosk.log | tail -1)"
  [ "$(led $LED_SAFE)$(led $LED_ERROR)" = 10 ] || why="LEDs safe=$(led $LED_SAFE) error=$(led $LED_ERROR)"
  [ "$(marked)" = 3 ] || why="${why:-$(marked) of 3 sessions marked exported}"
  card > $RUN/card-now; cmp -s $RUN/card $RUN/card-now || why="${why:-the card changed}"
  echo "$why"
}

# Two sticks: the first exporting the large session when a second arrives and is pulled again.
n=$(exports_ended); b=$(count 'event=export.session session=bulk'); why=""
stick_in u5 stick5
ends $((b + 1)) 'event=export.session session=bulk' 600 || why="the export did not reach the large session"
stick_in u6 stick6
i=0; while [ ! -e /sys/block/sdb ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e /sys/block/sdb ] || why="${why:-the second stick did not appear}"
qmp '{"execute":"device_del","arguments":{"id":"u6"}}'
waitfor absent /sys/block/sdb 100 || why="${why:-the second stick is still there}"
ends $((n + 1)) 'event=export.\(done\|failed\)' 1200 || why="${why:-no end of the export}"
first=$(grep 'event=export\.\(done\|failed\)' $RUN/kiosk.log | sed -n "$((n + 1))p")
echo "STICK-EXPORT: case=twosticks $first"
case $first in *export.done*sessions=3*) ;; *) why="${why:-the first stick's export did not end well}" ;; esac
# The second stick's arrival queued an export; with it gone, the first stick gets it (nothing
# left to export): wait for it to end before reading the LEDs.
ends $((n + 2)) 'event=export.\(done\|failed\)' 300 || why="${why:-the queued export did not end}"
[ -z "$why" ] && why=$(good)
stick_out u5
sleep 0.3
[ -z "$why" ] && { [ "$(led $LED_SAFE)" = 0 ] || why="safe-to-remove lit with no stick"; }
print_markers twosticks
result twosticks "${why:+1}${why:-0}" "$why"

# Pulled mid-export, then the same stick back: the pull is an error and marks nothing; what the
# stick then holds may be damaged (FAT loses the writes in flight), so the second plug may end
# well (every session verified on it) or fail (and say so) — never mark what is not on it.
n=$(exports_ended); b=$(count 'event=export.session session=bulk'); why=""
stick_in u7 stick7
ends $((b + 1)) 'event=export.session session=bulk' 600 || why="the export did not reach the large session"
sleep 0.3
stick_out u7
ends $((n + 1)) 'event=export.\(done\|failed\)' 600 || why="${why:-no end of the export}"
grep 'event=export\.\(done\|failed\)' $RUN/kiosk.log | tail -1 | grep -q 'export.failed' || why="${why:-the pulled stick's export did not fail}"
sleep 0.3
grep 'event=state ' $RUN/kiosk.log | tail -1 | grep -q 'to=error-export$' || why="${why:-state after the pull: $(grep 'event=state ' $RUN/kiosk.log | tail -1)}"
[ "$(marked)" = 0 ] || why="${why:-sessions marked exported after a pull}"
lit_within $LED_ERROR 3 || why="${why:-error LED never lit after the pull}"
stick_in u8 stick7
ends $((n + 2)) 'event=export.\(done\|failed\)' 1200 || why="${why:-no end of the second export}"
last=$(grep 'event=export\.\(done\|failed\)' $RUN/kiosk.log | tail -1)
echo "STICK-EXPORT: case=pulled re-inserted: $last"
case $last in
  *export.done*) [ -n "$why" ] || why=$(good) ;;
  *) [ "$(marked)" = 0 ] || why="${why:-marked exported after a failed export}"
     lit_within $LED_ERROR 3 || why="${why:-error LED never lit}" ;;
esac
card > $RUN/card-now; cmp -s $RUN/card $RUN/card-now || why="${why:-the card changed}"
stick_out u8
print_markers pulled
result pulled "${why:+1}${why:-0}" "$why"

# A hostile stick: everything exported beside what is there; the forged export does not count.
n=$(exports_ended); why=""
stick_in u9 stick8
ends $((n + 1)) 'event=export.\(done\|failed\)' 1200 || why="no end of the export"
grep 'event=export\.\(done\|failed\)' $RUN/kiosk.log | tail -1 | sed 's/^/STICK-EXPORT: case=hostile /'
[ -z "$why" ] && { grep 'event=export\.\(done\|failed\)' $RUN/kiosk.log | tail -1 | grep -q 'export.done.*sessions=3' || why="the export did not end well"; }
[ -z "$why" ] && why=$(good)
stick_out u9
print_markers hostile
result hostile "${why:+1}${why:-0}" "$why"

kiosk_stop
echo "STICK-CASES: rc=$rc"
[ $rc = 0 ]
