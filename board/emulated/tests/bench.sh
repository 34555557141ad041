# `facekit bench capture` on the board: replay-source decode (640x480 and 1280x720, full and
# DCT-downscaled) plus streaming from the MJPEG loopback camera at both sizes. Figures go to
# the host as results/bench-*.json. Frames are few: the guest CPU is emulated (TCG).
lsmod | grep -q v4l2loopback || modprobe v4l2loopback devices=2 video_nr=10,11 \
  card_label=facekit-mjpeg-vga,facekit-mjpeg-hd exclusive_caps=1,1 max_buffers=8
# The loopback camera runs slower than 30 fps here so the emulated CPU decodes every frame before
# the feeder overwrites its buffer (v4l2loopback does not wait for a slow reader).
stopbg $RUN/feed.pid   # a feeder left by a failed earlier test
for size in 640x480 1280x720; do
  dev=/dev/video10; fps=15; [ $size = 1280x720 ] && { dev=/dev/video11; fps=5; }
  fkbg capture feed --device $dev --mjpeg $MEDIA/bench-$size.mjpeg --fps $fps > $RUN/feed-$size.log 2>&1
  F=$!
  waitline feeding $RUN/feed-$size.log 200 || fail "feeder did not start: $(cat $RUN/feed-$size.log)"
  fk bench capture --frames 10 --mjpeg $MEDIA/bench-$size.mjpeg --device $dev --format MJPG --size $size --fps $fps --json \
    > $RUN/bench-$size.json || { stopbg $F; fail "bench capture $size"; }
  stopbg $F
  json bench-$size $RUN/bench-$size.json
done
true
