# `facekit devices` lists what the board has: the vivid and v4l2loopback cameras, a gpio-sim
# chip with named lines, and the cold-plugged USB stick; then the stick is hot-unplugged and
# replugged over QMP and the listing follows. The host checks the JSON (scripts/tests/40-...).
modprobe xhci-pci && modprobe usb-storage delay_use=0 && modprobe sd_mod && modprobe vfat &&
  modprobe nls_cp437 && modprobe nls_ascii || fail "USB storage modules"
[ -e /dev/video0 ] || modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0
# v4l2loopback lists its MJPEG capture format only once a producer has written a frame.
lsmod | grep -q v4l2loopback || modprobe v4l2loopback devices=2 video_nr=10,11 \
  card_label=facekit-mjpeg-vga,facekit-mjpeg-hd exclusive_caps=1,1 max_buffers=8
fkbg capture feed --device /dev/video10 --mjpeg $MEDIA/cam-640x480.mjpeg --fps 5 > $RUN/feed.log 2>&1
echo $! > $RUN/feed.pid
waitline feeding $RUN/feed.log 200 || fail "feeder did not start: $(cat $RUN/feed.log)"
modprobe gpio-sim || fail "modprobe gpio-sim"
grep -q configfs /proc/mounts || mount -t configfs none /sys/kernel/config
C=/sys/kernel/config/gpio-sim/facekit
mkdir $C $C/bank0 $C/bank0/line0 $C/bank0/line1 $C/bank0/line5
echo 8 > $C/bank0/num_lines; echo facekit-buttons > $C/bank0/label
echo BTN_START > $C/bank0/line0/name; echo BTN_MARK > $C/bank0/line1/name; echo LED_SAFE > $C/bank0/line5/name
echo 1 > $C/live || fail "gpio-sim did not go live"
waitfor present /sys/block/sda/sda1 100 || fail "no USB stick (sda1)"
fk devices --json > $RUN/devices.json || fail "facekit devices failed"
json devices $RUN/devices.json
fk devices
# Hot-unplug the cold-plugged stick, replug it, write to it: the host checks the file with mtools.
qmp '{"execute":"device_del","arguments":{"id":"u0"}}'
waitfor absent /sys/block/sda 100 || fail "stick still present after device_del"
fk devices --json > $RUN/devices-unplugged.json
json devices-unplugged $RUN/devices-unplugged.json
qmp '{"execute":"device_add","arguments":{"driver":"usb-storage","bus":"xhci.0","drive":"stick","id":"u1","removable":true}}'
waitfor present /sys/block/sda/sda1 100 || fail "stick did not come back after device_add"
# Mounted inside the chroot's tree: a chrooted process sees only mounts under its root.
mkdir -p $RUN/stick && mount -t vfat /dev/sda1 $RUN/stick || fail "mount the stick"
[ "$(cat $RUN/stick/HOST.TXT)" = "written by the host" ] || fail "HOST.TXT not readable"
fk devices --json > $RUN/devices-replugged.json
json devices-replugged $RUN/devices-replugged.json
echo "written by the guest after replug" > $RUN/stick/GUEST.TXT
sync; umount $RUN/stick || fail "umount the stick"
# The stick back under its cold-plug id, as the next test (the kiosk's, on the aarch64 board) expects.
qmp '{"execute":"device_del","arguments":{"id":"u1"}}'
waitfor absent /sys/block/sda 100 || fail "stick still present after device_del"
qmp '{"execute":"device_add","arguments":{"driver":"usb-storage","bus":"xhci.0","drive":"stick","id":"u0","removable":true}}'
waitfor present /sys/block/sda/sda1 100 || fail "stick did not come back as u0"
stopbg $RUN/feed.pid
true
