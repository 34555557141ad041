# One boot of the power-cut campaign (scripts/board/power-cuts; needs --data and --sticks 2).
# First it reports what the previous boot's power cut left on the data disk (before anything
# touches it), then the kiosk starts with a fresh stick plugged (u0): it must recover the cut
# session and export every pending session; the store is listed and every session verified
# record by record, and u0 is unplugged. Then one cycle the host cuts the power in: a session
# recorded (the frames.log size printed every 100 ms, so the host knows how many frames had
# reached the kernel at the cut), stopped, exported to a second fresh stick (stick2) and marked
# exported. The guest announces each phase (BOARD: PHASE name); scripts/board/qemu.py kills
# QEMU at the moment it was given (--cut PHASE:MS). board.cutfinal=1: the last boot, which only
# checks and exports, then powers off.
# Lines for the host (scripts/board/check-power-cuts.py): CUT-RAW (before the kiosk), CUT-LIST
# and CUT-VERIFY (after the boot's export), BOARD: PROGRESS, BOARD: PHASE.
. "/host$REPO/board/emulated/tests/kiosk-lib.sh"
waitfor present /sys/block/sda/sda1 100 || fail "no stick at boot"

# What the cut left, untouched: each session's state, frames.log size and export marker.
for d in $STORE/*/; do
  [ -d "$d" ] || continue
  id=$(basename "$d")
  st=$(sed -n 's/.*"state" : "\([a-z]*\)".*/\1/p' "$d/session.json" 2>/dev/null)
  size=$(stat -c %s "$d/frames.log" 2>/dev/null || echo -1)
  mark=$(tr -d '\n ' < "$d/exported.json" 2>/dev/null)
  echo "CUT-RAW: session=$id state=${st:-none} bytes=$size marker=${mark:-none}"
done > $RUN/raw.txt
ls -a $STORE | grep '^\.' | grep -v '^\.\.\?$' | sed 's/^/CUT-RAW: hidden=/' >> $RUN/raw.txt
cat $RUN/raw.txt
echo "CUT-RAW: end"

kiosk_start
waitline 'event=export.done\|event=export.failed' $RUN/kiosk.log 1200 || fail "no export at boot: $(tail -5 $RUN/kiosk.log)"
grep -q 'event=export.failed' $RUN/kiosk.log && fail "the boot's export failed: $(grep export.failed $RUN/kiosk.log)"
state ready 1 300
fk sessions list --store ${STORE#/host} --json > $RUN/list.json || fail "sessions list"
json cut-list $RUN/list.json
# Every record of the sessions this boot or the cut touched (no marker before the kiosk started);
# the others were verified by an earlier boot and are only listed.
for d in $STORE/*/; do
  [ -d "$d" ] || continue
  id=$(basename "$d")
  size=$(stat -c %s "$d/frames.log" 2>/dev/null || echo -1)
  mark=$(tr -d '\n ' < "$d/exported.json" 2>/dev/null)
  if grep -q "^CUT-RAW: session=$id .* marker=none" $RUN/raw.txt; then
    if fk sessions verify "$id" --store ${STORE#/host} > $RUN/verify.txt 2>&1; then r=0; else r=$?; fi
    echo "CUT-VERIFY: session=$id rc=$r bytes=$size marker=${mark:-none} $(tail -1 $RUN/verify.txt)"
  else
    echo "CUT-VERIFY: session=$id rc=earlier bytes=$size marker=${mark:-none}"
  fi
done
echo "CUT-VERIFY: end"
# Sessions exported and checked by an earlier boot go, so every boot costs the same: the store
# would otherwise grow by one session a cut, and listing it with it.
grep -v 'marker=none' $RUN/raw.txt | sed -n 's/^CUT-RAW: session=\([^ ]*\) .*/\1/p' | while read -r id; do
  fk sessions delete "$id" --store ${STORE#/host} > /dev/null 2>&1 || fail "sessions delete $id"
  echo "CUT-DELETED: session=$id"
done
stick_out u0
waitline 'event=stick.removed' $RUN/kiosk.log 100 || fail "no stick.removed"

if [ "$(arg board.cutfinal)" = 1 ]; then
  kiosk_stop
  true
else
  # The cycle. The progress printer runs while the session records and stops with it.
  press 0
  state recording 1 300
  sid=$(grep 'event=session.started' $RUN/kiosk.log | tail -1 | sed 's/.* session=\([^ ]*\).*/\1/')
  [ -n "$sid" ] || fail "no session id"
  ( while :; do
      s=$(stat -c %s "$STORE/$sid/frames.log" 2>/dev/null) && echo "BOARD: PROGRESS session=$sid bytes=$s uptime=$(up)"
      sleep 0.1
    done ) &
  PROG=$!
  echo "BOARD: PHASE recording session=$sid"
  sleep 3
  echo "BOARD: PHASE stopping"
  press 0
  state stopped 1 300
  waitline 'event=session.stopped' $RUN/kiosk.log 300 || fail "no session.stopped"
  kill $PROG
  # The boot's first export already logged an end: only a later one is this export's.
  ended=$(grep -c 'event=export\.\(done\|failed\)' $RUN/kiosk.log)
  echo "BOARD: PHASE exporting"
  stick_in u2 stick2
  # The markers are written once the stick is unmounted: the moment it leaves /proc/mounts.
  # Shell builtins only: a forked command per turn would miss a short mount.
  mounted=0; i=0
  while [ $i -lt 20000 ]; do
    m=0; while read -r dev mp rest; do [ "$mp" = /host/run/facekit/usb ] && m=1; done < /proc/mounts
    [ $mounted = 1 ] && [ $m = 0 ] && break
    mounted=$m; i=$((i + 1))
    if [ $((i % 200)) = 0 ]; then
      k=0; while read -r l; do case $l in *event=export.failed*|*event=export.done*) k=$((k + 1)) ;; esac; done < $RUN/kiosk.log
      [ $k -gt $ended ] && [ $m = 0 ] && i=20000
    fi
  done
  echo "BOARD: PHASE marking"
  i=0; while [ "$(grep -c 'event=export\.\(done\|failed\)' $RUN/kiosk.log)" -le $ended ] && [ $i -lt 1200 ]; do
    sleep 0.1; i=$((i + 1)); done
  [ $i -lt 1200 ] || fail "the cycle's export did not end"
  echo "BOARD: PHASE done $(grep 'event=export\.\(done\|failed\)' $RUN/kiosk.log | tail -1)"
  # Waiting for the cut (the host's timer may fall after the cycle).
  echo "BOARD: CUT-NOW"
  sleep 60
  fail "still running after the power cut"
fi
