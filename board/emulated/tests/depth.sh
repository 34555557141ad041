# Depth through the C driver shim against a real kernel driver: vivid offers V4L2_PIX_FMT_Y16
# (16-bit grey; its format list has no Z16), which facekit's V4L2 depth driver reads as depth, run
# out of process by facekit-depth-host. ≥ 100 frames at 640x480 and the board's camera rate (25 fps;
# lower on the aarch64 board); the host checks rate, sequence numbers, timestamps and that the
# samples are real data. A format the device lacks
# (Z16) and a missing device must give clear errors, not a crash.
[ -e /dev/video0 ] || { modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0 || fail "modprobe vivid"; }
waitfor present /dev/video0 50 || fail "no /dev/video0 from vivid"
DRV=$DEPTH_DIR/libfacekit-depth-v4l2.so
t=$(up)
fk depth probe --driver "$DRV" --uri /dev/video0 --options format=Y16,width=640,height=480,fps=$DEPTH_FPS \
  --frames 100 --skip 10 --seconds 40 --json > $RUN/depth.json; rc=$?
json depth-vivid-y16 $RUN/depth.json
echo "vivid Y16 depth: rc=$rc in $(since $t) s"
[ $rc = 0 ] || fail "depth probe on vivid Y16 failed: $(cat $RUN/depth.json)"
fk depth probe --driver "$DRV" --uri /dev/video0 --options format=Z16 --frames 1 > $RUN/z16.log 2>&1 \
  && fail "Z16 accepted by a device without it"
grep -q "offers no Z16" $RUN/z16.log || fail "unclear error for a missing Z16 format: $(cat $RUN/z16.log)"
fk depth probe --driver "$DRV" --uri /dev/video99 --frames 1 > $RUN/nodev.log 2>&1 \
  && fail "a missing device was accepted"
grep -q "cannot open depth camera /dev/video99" $RUN/nodev.log || fail "unclear error for a missing device: $(cat $RUN/nodev.log)"
echo "depth errors: $(cat $RUN/z16.log | cut -c1-160) | $(cat $RUN/nodev.log | cut -c1-160)"
