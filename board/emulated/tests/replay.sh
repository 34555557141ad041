# Tracking a replayed camera clip on the board, for the cross-board comparison
# (scripts/tests/55-arm-board.sh): `facekit process` of the same clip (the first 24 frames of
# testdata/single_face.mp4 as Y4M, made once on the host: read by facekit itself, where other
# formats need ffmpeg, which the arm64 tree does not have; a file, so every board tracks exactly
# the same frames, which a live loopback camera dropping frames under TCG would not) writes its
# HDF5 export to a stick of its own (drive "stick3", plugged here as "ureplay", so the other
# tests' sticks are untouched). The host reads it with mtools and compares landmarks and blend
# shapes with the other board's bit for bit (scripts/board/compare-replay.py).
modprobe xhci-pci && modprobe usb-storage delay_use=0 && modprobe sd_mod && modprobe vfat &&
  modprobe nls_cp437 && modprobe nls_ascii || fail "USB storage modules"
CLIP=$MEDIA/replay-face.y4m
[ -f /host$CLIP ] || fail "no replay clip $CLIP"
MODEL=${BOARD_MODEL:-$REPO/models/facekit.fkm}
# The USB modules may have just been loaded: the stick scripts/board/run cold-plugs (u0) is then
# still being enumerated and would be taken for the replay stick. So: wait for it (when a test
# before this one unplugged it, this costs the 10 s limit), then snapshot the disks once the set
# has been the same for 1 s.
waitfor present /sys/block/sda/sda1 100
sds() { ls /sys/block | grep '^sd' | tr '\n' ' '; }
before=$(sds); same=0; i=0
while [ $same -lt 10 ] && [ $i -lt 150 ]; do
  sleep 0.1; i=$((i + 1)); now=$(sds)
  if [ "$now" = "$before" ]; then same=$((same + 1)); else before=$now; same=0; fi
done
qmp '{"execute":"device_add","arguments":{"driver":"usb-storage","bus":"xhci.0","drive":"stick3","id":"ureplay","removable":true}}'
dev=""; i=0
while [ -z "$dev" ] && [ $i -lt 100 ]; do
  for d in $(ls /sys/block | grep '^sd'); do
    case " $before " in *" $d "*) ;; *) [ -e /sys/block/$d/${d}1 ] && dev=$d ;; esac
  done
  sleep 0.1; i=$((i + 1))
done
[ -n "$dev" ] || fail "the replay stick did not appear"
mkdir -p $RUN/replay && mount -t vfat /dev/${dev}1 $RUN/replay || fail "mount the replay stick"
t=$(up)
fk process $CLIP --out /run/replay/$(uname -m) --format hdf5 --store /run/replay-store --model $MODEL \
  > $RUN/replay.log 2>&1; rc=$?
cat $RUN/replay.log
echo "replay: $(uname -m) processed $CLIP in $(since $t) s (rc=$rc)"
sync; umount $RUN/replay || fail "umount the replay stick"
qmp '{"execute":"device_del","arguments":{"id":"ureplay"}}'
waitfor absent /sys/block/$dev 100 || fail "replay stick still present"
[ $rc = 0 ] || fail "facekit process of the replay clip failed"
