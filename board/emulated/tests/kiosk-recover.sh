# The kiosk's second boot (scripts/tests/45-kiosk-board.sh), after the power cut of kiosk.sh: the
# session cut short is recovered as interrupted and exported to the stick that is plugged in at
# boot (a fresh image); the camera is unplugged (vivid unbound) and replugged: error state, then
# ready again; a stick whose filesystem was wiped is refused with a clear error and left as it is
# (never formatted; the host checks the image); SIGTERM ends the daemon with 0.
. "/host$REPO/board/emulated/tests/kiosk-lib.sh"
waitfor present /sys/block/sda/sda1 100 || fail "no stick at boot"
kiosk_start
waitline 'event=export.done' $RUN/kiosk.log 1200 || fail "no export at boot: $(tail -5 $RUN/kiosk.log)"
grep 'event=export.done' $RUN/kiosk.log | grep -q 'sessions=1' || fail "expected exactly the interrupted session: $(grep export.done $RUN/kiosk.log)"
cut=$(ls $STORE | grep '^P' | sort | tail -1)
grep -q '"state" : "interrupted"' $STORE/$cut/session.json || fail "$cut is not interrupted: $(grep state $STORE/$cut/session.json)"
[ -e $STORE/$cut/exported.json ] || fail "$cut not marked exported"
sed 's/^/KIOSK-RECOVERED: /' $STORE/$cut/exported.json; echo
[ "$(led $LED_SAFE)" = 1 ] || fail "safe-to-remove LED not lit"
stick_out u0

# The camera unplugged and back.
echo vivid.0 > /sys/bus/platform/drivers/vivid/unbind || fail "unbind vivid"
state error-camera 1 300
sleep 0.5
[ "$(led $LED_READY)" = 0 ] || fail "ready LED lit without a camera"
echo vivid.0 > /sys/bus/platform/drivers/vivid/bind || fail "bind vivid"
state ready 3 600

# An unformatted stick: the second image, exported to (nothing pending) and then wiped while
# unmounted, replugged: an error naming what is on it, the error LED, and no format.
stick_in u2 stick2
i=0; while [ "$(count 'event=export.done')" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(count 'event=export.done')" = 2 ] || fail "no export to the second stick"
dd if=/dev/zero of=/dev/sda1 bs=4096 count=256 2>/dev/null; sync
stick_out u2
stick_in u3 stick2
state error-export 1 300
grep 'event=export.failed' $RUN/kiosk.log | tail -1 | grep -q 'blank (unformatted).*never formats' || fail "unexpected error: $(grep export.failed $RUN/kiosk.log | tail -1)"
lit_within $LED_ERROR 3 || fail "error LED (heartbeat) never lit in 3 s"
[ "$(led $LED_SAFE)" = 0 ] || fail "safe-to-remove lit for a refused stick"
stick_out u3
kiosk_stop
grep -c WATCHDOG=1 $RUN/notify.log | sed 's/^/KIOSK-FIGURE: watchdog_pings=/'
true
