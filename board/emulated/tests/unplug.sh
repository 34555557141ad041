# Unplug during streaming: facekit keeps running, reports the camera gone (ENODEV), and resumes
# when it returns. Without --check: this test is about recovery (the host checks disconnects,
# reconnects, frames after the replug, rate, timestamps and re-applied controls); gap-free
# capture is the capture test's job, and vivid restarting after a bind is a burst of CPU work
# that can make it skip a sequence number on the emulated CPU. The "unplug" is unbinding vivid's platform device from its driver, which
# unregisters /dev/video0 exactly as a USB disconnect does; binding it again is the replug.
# The MJPEG feeder left by the capture test would only compete for the emulated CPU.
stopbg $RUN/feed.pid
[ -e /dev/video0 ] || modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0
waitfor present /dev/video0 50 || fail "no /dev/video0"
t=$(up)
fkbg capture --device /dev/video0 --format YUYV --size 640x480 --fps $FPS --frames 60 --skip 10 --reconnects 1 --seconds 60 \
  --gain 42 --controls osd_text_mode=2 --json > $RUN/unplug.json 2> $RUN/unplug.err
P=$!
waitline streaming $RUN/unplug.err 300 || fail "capture did not start: $(cat $RUN/unplug.err)"
sleep 1
echo vivid.0 > /sys/bus/platform/drivers/vivid/unbind || fail "unbind vivid"
waitfor absent /dev/video0 50 || fail "/dev/video0 still there after unbind"
echo "unplugged at $(since $t) s"
sleep 1.5
echo vivid.0 > /sys/bus/platform/drivers/vivid/bind || fail "bind vivid"
waitfor present /dev/video0 50 || fail "/dev/video0 did not come back"
echo "replugged at $(since $t) s"
wait $P; rc=$?
cat $RUN/unplug.err
json capture-unplug $RUN/unplug.json
echo "unplug/replug: rc=$rc in $(since $t) s"
[ $rc = 0 ] || fail "capture did not recover: $(cat $RUN/unplug.json)"
grep -q 'disconnected' $RUN/unplug.err || fail "no disconnect state was reported"
