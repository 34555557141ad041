# The kiosk's status screen on the emulated board (scripts/tests/49-display-board.sh; needs
# --display, --data and three sticks): a face clip played into a v4l2loopback MJPEG camera, the
# kiosk run with display.enabled. First without a monitor driver (no /dev/dri/card0): the kiosk
# says so once and runs. Then with QEMU's bochs display (bochs DRM driver): a screenshot of each
# state — the framing check, recording with markers, paused, exporting to a stick, the error of
# a blank stick — and of `facekit display --demo` on the fbdev fallback, taken by the host with
# QMP screendump and checked there by content (scripts/board/check-display.py).
OUTDIR=$(arg board.out)
modprobe v4l2loopback devices=1 video_nr=10 card_label=facekit-face exclusive_caps=1 max_buffers=8 || fail "modprobe v4l2loopback"
CLIP=$MEDIA/face-640x480.mjpeg
[ -f /host$CLIP ] || fail "no face clip $CLIP (scripts/tests/49-display-board.sh makes it)"
fkbg capture feed --device /dev/video10 --mjpeg $CLIP --fps 10 > $RUN/feed.log 2>&1
FEED=$!
waitline feeding $RUN/feed.log 300 || fail "the face feeder did not start: $(cat $RUN/feed.log)"
KIOSK_CAMERA='{"device": "/dev/video10", "format": "MJPG", "width": 640, "height": 480, "fps": 10}'
KIOSK_EXTRA='"display": {"enabled": true, "backend": "drm", "rateHz": 10},'
. "/host$REPO/board/emulated/tests/kiosk-lib.sh"
waitfor present /sys/block/sda/sda1 100 && stick_out u0

# shot NAME: the host takes a screenshot (OUTDIR/screens/NAME.png); wait until it is there.
shot() {
  echo "BOARD: SCREENDUMP $1"
  waitfor present /host$OUTDIR/screens/$1.png 200 || fail "no screenshot $1"
  echo "KIOSK-DISPLAY: screenshot $1"
}

# No monitor driver: the display is off, said once, and the kiosk is ready as ever.
[ -e /dev/dri/card0 ] && fail "/dev/dri/card0 exists before the bochs driver is loaded"
kiosk_start
state ready 1 600
[ "$(count 'event=display.off')" = 1 ] || fail "expected one display.off line: $(grep display $RUN/kiosk.log)"
grep 'event=display.off' $RUN/kiosk.log | sed 's/^/KIOSK-DISPLAY: /'
kiosk_stop

# A monitor.
modprobe bochs || fail "modprobe bochs"
waitfor present /dev/dri/card0 100 || fail "no /dev/dri/card0 after modprobe bochs"
kiosk_start
waitline 'event=display.started' $RUN/kiosk.log 100 || fail "the display did not start: $(grep display $RUN/kiosk.log)"
grep 'event=display.started' $RUN/kiosk.log | sed 's/^/KIOSK-DISPLAY: /'
state ready 1 600
# The tracker finds the face within a few frames; the display shows it at its next draw.
sleep 4
shot framing
press 0
state recording 1 300
for i in 1 2; do pull 1 up; sleep 0.05; pull 1 down; sleep 0.4; done
sleep 3
shot recording
press 2
state paused 1 100
sleep 1.5
shot paused
press 2
state recording 2 100
press 0
state stopped 1 300
# A stick: the large pre-recorded session makes the export last long enough to be seen.
stick_in u2 stick2
waitline 'event=export.session session=bulk' $RUN/kiosk.log 600 || fail "the export did not reach the bulk session"
sleep 1.5
shot exporting
waitline 'event=export.done' $RUN/kiosk.log 1800 || fail "the export did not finish: $(tail -3 $RUN/kiosk.log)"
state ready 2 100
sleep 1
shot exported
stick_out u2
# A blank stick: refused, the error state on the screen.
stick_in u3 stick3
state error-export 1 300
sleep 1.5
shot error
stick_out u3
kiosk_stop
stopbg $FEED

# The fbdev fallback: the bochs driver's framebuffer emulation, /dev/fb0, drawn by the demo.
[ -e /dev/fb0 ] || fail "no /dev/fb0 from the bochs driver"
fkbg display --demo --backend fbdev --device /dev/fb0 --seconds 20 --media $CLIP --model $MODEL > $RUN/fbdev.log 2>&1
DEMO=$!
waitline '^display: /dev/fb0' $RUN/fbdev.log 300 || fail "the fbdev demo did not start: $(cat $RUN/fbdev.log)"
sed 's/^/KIOSK-DISPLAY: /' $RUN/fbdev.log
sleep 2
shot fbdev
stopbg $DEMO
grep -c 'event=display' $RUN/kiosk.log | sed 's/^/KIOSK-DISPLAY: display lines: /'
true
