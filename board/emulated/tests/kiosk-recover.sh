# The kiosk's second boot (scripts/tests/45-kiosk-board.sh), after the power cut of kiosk.sh: the
# session cut short is recovered as interrupted and exported to the stick that is plugged in at
# boot (a fresh image); the camera is unplugged (vivid unbound) and replugged: error state, then
# ready again; SIGTERM ends the daemon with 0.
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
kiosk_stop
grep -c WATCHDOG=1 $RUN/notify.log | sed 's/^/KIOSK-FIGURE: watchdog_pings=/'
true
