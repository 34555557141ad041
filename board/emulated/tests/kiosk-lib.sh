# Sourced by the kiosk guest tests (kiosk.sh, kiosk-recover.sh): the kiosk's devices and its
# daemon. The session store is the persistent data disk (/dev/vda, ext4, made and pre-filled by
# scripts/tests/45-kiosk-board.sh) mounted in the chroot at /run/data; buttons, the TTL input and
# the LEDs are gpio-sim lines; the camera is vivid; sd_notify goes to a listener on an abstract
# socket (the host's python3 through the chroot).
modprobe xhci-pci && modprobe usb-storage delay_use=0 && modprobe sd_mod && modprobe vfat &&
  modprobe nls_cp437 && modprobe nls_ascii && modprobe virtio_blk && modprobe ext4 || fail "kiosk modules"
[ -e /dev/video0 ] || modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0 || fail "vivid"
modprobe gpio-sim || fail "modprobe gpio-sim"
grep -q configfs /proc/mounts || mount -t configfs none /sys/kernel/config
C=/sys/kernel/config/gpio-sim/kiosk
mkdir $C $C/bank0 || fail "gpio-sim configfs"
echo 12 > $C/bank0/num_lines; echo kiosk-gpio > $C/bank0/label
n=0
for name in BTN_SESSION TTL_STIM BTN_PAUSE LED_READY LED_REC LED_PAUSED LED_EXPORT LED_SAFE LED_ERROR; do
  mkdir $C/bank0/line$n; echo $name > $C/bank0/line$n/name; n=$((n + 1))
done
echo 1 > $C/live || fail "gpio-sim did not go live"
SIM=/sys/bus/gpio/devices/$(cat $C/bank0/chip_name)
pull() { echo pull-$2 > $SIM/sim_gpio$1/pull; }
led() { cat $SIM/sim_gpio$1/value; }
# lit_within LED SECONDS: whether the LED was lit at any instant within SECONDS. A heartbeat is
# lit 2 × 100 ms a second, so sampling it every ~125 ms (sleep 0.1 plus a forked cat on a loaded
# host) can miss every pulse; this loop uses shell builtins only and samples every few ms.
lit_within() {
  local v up end
  read up v < /proc/uptime; end=$((${up%.*} + $2))
  while :; do
    read v < $SIM/sim_gpio$1/value; [ "$v" = 1 ] && return 0
    read up v < /proc/uptime; [ "${up%.*}" -lt $end ] || return 1
  done
}
LED_READY=3; LED_REC=4; LED_PAUSED=5; LED_EXPORT=6; LED_SAFE=7; LED_ERROR=8
for l in 0 1 2; do pull $l down; done

waitfor present /dev/vda 100 || fail "no data disk /dev/vda"
mkdir -p $RUN/data && mount -t ext4 /dev/vda $RUN/data || fail "mount the data disk"
STORE=$RUN/data/facekit/sessions

# KIOSK_CAMERA: the camera's JSON object instead of vivid's; KIOSK_EXTRA: more top-level keys
# (each ending with a comma), e.g. the display's.
# KIOSK_LSL=1: the kiosk publishes its LSL streams (liblsl from the verification venv's pylsl,
# through the chroot like everything else), on the guest's loopback.
LSL_CONFIG=""
if [ "${KIOSK_LSL:-0}" = 1 ]; then
  LSLLIB=$(ls /host$REPO/.venv/lib/python3*/site-packages/pylsl/lib/liblsl.so* 2>/dev/null | head -1)
  [ -n "$LSLLIB" ] || fail "KIOSK_LSL=1 but no liblsl in the verification venv (scripts/install-deps)"
  chroot /host /usr/sbin/ip link set lo up || fail "loopback up"
  LSL_CONFIG="\"lsl\": {\"enabled\": true, \"library\": \"${LSLLIB#/host}\"},"
fi

[ -n "${KIOSK_CAMERA:-}" ] || KIOSK_CAMERA="{\"device\": \"/dev/video0\", \"format\": \"YUYV\", \"width\": 640, \"height\": 480, \"fps\": $FPS}"
MODEL=$REPO/models/facekit.fkm
[ -f /host$MODEL ] || MODEL=$REPO/.cache/board/kiosk-model.fkm
[ -z "$BOARD_MODEL" ] || MODEL=$BOARD_MODEL
cat > $RUN/kiosk.json <<EOF
{
  "camera": $KIOSK_CAMERA,
  "tracker": {"model": "$MODEL"},
  "recording": {"vertices": "none", "flushIntervalMs": 500},
  $LSL_CONFIG
  ${KIOSK_EXTRA:-}
  "dataDirectory": "/run/data/facekit",
  "export": {"format": "hdf5", "mountPoint": "/run/facekit/usb"},
  "participants": {"prefix": "P", "digits": 3},
  "gpio": {
    "inputs": [
      {"chip": "kiosk-gpio", "line": "BTN_SESSION", "action": "session.toggle", "debounceMs": 50},
      {"chip": "kiosk-gpio", "line": "TTL_STIM", "action": "marker:stimulus", "minPulseUs": 1000},
      {"chip": "kiosk-gpio", "line": "BTN_PAUSE", "action": "session.pause-toggle", "debounceMs": 50}
    ],
    "outputs": [
      {"chip": "kiosk-gpio", "line": "LED_READY", "role": "ready"},
      {"chip": "kiosk-gpio", "line": "LED_REC", "role": "recording"},
      {"chip": "kiosk-gpio", "line": "LED_PAUSED", "role": "paused", "pattern": "blink:1"},
      {"chip": "kiosk-gpio", "line": "LED_EXPORT", "role": "exporting", "pattern": "blink:4"},
      {"chip": "kiosk-gpio", "line": "LED_SAFE", "role": "safe-to-remove"},
      {"chip": "kiosk-gpio", "line": "LED_ERROR", "role": "error", "pattern": "heartbeat"}
    ]
  }
}
EOF
fk run --config /run/kiosk.json --check-config || fail "the kiosk config does not validate"

# kiosk_start: the listener, then `facekit run` as systemd would start it (NOTIFY_SOCKET,
# WATCHDOG_USEC); waits for READY=1. Log lines go to the console too (KIOSK: ...).
kiosk_start() {
  rm -f $RUN/notify.log
  # Created before either side opens it: the background redirection below may run after
  # `tail -f` starts, and a tail that finds no file gives up, losing every KIOSK: line.
  : > $RUN/kiosk.log
  ( exec chroot /host python3 "$REPO/board/emulated/tests/notify-listen.py" facekit-notify /run/notify.log ) &
  LISTENER=$!
  waitfor present $RUN/notify.log 100 || fail "notify listener did not start"
  T_START=$(up)
  ( exec chroot /host env JSIMD_FORCENONE=1 NOTIFY_SOCKET=@facekit-notify WATCHDOG_USEC=6000000 \
      "$BIN" run --config /run/kiosk.json ) 2> $RUN/kiosk.log &
  KIOSK=$!
  ( tail -f $RUN/kiosk.log | while IFS= read -r l; do echo "KIOSK: $l"; done ) &
  TAIL=$!
  # Up to 120 s for READY=1, but stop waiting as soon as facekit has exited (a config or model error).
  i=0; while ! grep -q 'READY=1' $RUN/notify.log 2>/dev/null && [ -e /proc/$KIOSK ] && [ $i -lt 1200 ]; do
    sleep 0.1; i=$((i + 1)); done
  grep -q 'READY=1' $RUN/notify.log 2>/dev/null || fail "no READY=1 from facekit run: $(cat $RUN/kiosk.log)"
  echo "KIOSK-FIGURE: ready_seconds=$(since $T_START)"
}
# kiosk_stop: SIGTERM; must exit 0 after closing its session.
kiosk_stop() {
  kill -TERM $KIOSK
  wait $KIOSK; rc=$?
  kill $TAIL $LISTENER 2>/dev/null
  [ "$rc" = 0 ] || fail "facekit run exited $rc after SIGTERM"
  grep -q 'STOPPING=1' $RUN/notify.log || fail "no STOPPING=1"
}
count() { grep -c "$1" $RUN/kiosk.log; }
# state NAME N TENTHS: waits until the kiosk has entered state NAME N times.
state() {
  i=0; while [ "$(count "event=state from=[^ ]* to=$1\$")" -lt "$2" ] && [ $i -lt "$3" ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(count "event=state from=[^ ]* to=$1\$")" -ge "$2" ] || fail "state $1 (#$2) not reached: $(tail -5 $RUN/kiosk.log)"
}
# A press held 0.2 s, then 0.2 s released: longer than the debounce both ways, so presses in a row stay apart.
press() { pull $1 up; sleep 0.2; pull $1 down; sleep 0.2; }
# stick_in ID [DRIVE]: plugs a stick image (drives from scripts/board/run --sticks).
stick_in() { qmp "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"usb-storage\",\"bus\":\"xhci.0\",\"drive\":\"${2:-stick}\",\"id\":\"$1\",\"removable\":true}}"; }
stick_out() { qmp "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$1\"}}"; waitfor absent /sys/block/sda 100 || fail "stick $1 still present"; }
# The store's files and their checksums (what the card holds).
store_sums() { (cd $STORE && find . -type f | sort | xargs md5sum); }
