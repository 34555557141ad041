# Cameras against real drivers: vivid (raw YUYV, webcam-like input, 640x480 capped at 25 fps)
# and v4l2loopback fed with MJPEG by `facekit capture feed` (a stand-in for a UVC webcam).
# ≥ 100 frames each at the device's rate; facekit's --check fails on timestamps going backwards,
# sequence gaps, corrupt or dropped frames, a rate more than 5 % off, or controls not read back.
# --skip 10: the first frames arrive while facekit itself is still being paged in over 9p, and
# vivid (which renders its pattern on the emulated CPU) skips a sequence number when starved;
# real cameras also get a settling period. osd_text_mode=2 turns off vivid's text overlay, which
# costs emulated CPU time per frame and says nothing about capture.
modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0 || fail "modprobe vivid"
waitfor present /dev/video0 50 || fail "no /dev/video0 from vivid"
t=$(up)
fk capture --device /dev/video0 --format YUYV --size 640x480 --fps $FPS --frames 100 --skip 10 --seconds 30 \
  --gain 42 --controls brightness=140,osd_text_mode=2 --check --json > $RUN/yuyv.json; rc=$?
json capture-yuyv $RUN/yuyv.json
echo "vivid YUYV: rc=$rc in $(since $t) s"
[ $rc = 0 ] || fail "vivid YUYV capture check failed: $(cat $RUN/yuyv.json)"
# Automatic gain back on, read back; and a control vivid lacks must fail with a clear message.
fk capture --device /dev/video0 --format YUYV --size 640x480 --fps 25 --frames 5 --gain auto --json > $RUN/auto.json \
  || fail "capture with --gain auto failed"
json capture-gain-auto $RUN/auto.json
fk capture --device /dev/video0 --format YUYV --size 640x480 --fps 25 --frames 5 --exposure 100 > $RUN/exp.log 2>&1 \
  && fail "--exposure on a camera without exposure control succeeded"
grep -q "has no manual exposure control" $RUN/exp.log || fail "unclear error for a missing control: $(cat $RUN/exp.log)"

modprobe v4l2loopback devices=2 video_nr=10,11 card_label=facekit-mjpeg-vga,facekit-mjpeg-hd exclusive_caps=1,1 max_buffers=8 \
  || fail "modprobe v4l2loopback"
fkbg capture feed --device /dev/video10 --mjpeg $MEDIA/cam-640x480.mjpeg --fps $MJPEG_FPS > $RUN/feed.log 2>&1
echo $! > $RUN/feed.pid   # so the next test stops it even if this one fails half-way
waitline feeding $RUN/feed.log 200 || fail "feeder did not start: $(cat $RUN/feed.log)"
t=$(up)
# Decoded at 1/2 scale (DCT domain): full-size decoding costs ~15 ms of emulated CPU per frame,
# half of the frame budget, and a host busy with other work then starves the guest into drops
# no real board would have. `bench` measures full-size decoding separately.
fk capture --device /dev/video10 --format MJPG --size 640x480 --fps $MJPEG_FPS --frames 100 --skip 10 --seconds 30 \
  --scale 2 --buffers 8 --check --json > $RUN/mjpeg.json; rc=$?
json capture-mjpeg $RUN/mjpeg.json
echo "loopback MJPEG: rc=$rc in $(since $t) s"
[ $rc = 0 ] || fail "MJPEG capture check failed: $(cat $RUN/mjpeg.json)"
stopbg $RUN/feed.pid
