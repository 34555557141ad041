# Sourced by board/emulated/init before each guest test (busybox sh). The host root is mounted
# read-only at /host with the guest's /proc, /sys, /dev over it and a tmpfs on /host/run, so
# `fk` runs the host-built facekit binary with the host's libraries against the guest's devices.
# On the aarch64 board /host is the arm64 Debian tree instead, BIN its packaged /usr/bin/facekit,
# and the repository (tests, media, models) is mounted at its host path inside it.
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
REPO=$(arg board.repo)
BIN=$(arg board.bin)
MEDIA=$(arg board.media)
# Where the depth drivers are (beside the binary in a build tree; /usr/lib/facekit/depth when
# packaged) and the packaged model, if the board names one.
DEPTH_DIR=$(arg board.depthdir); [ -n "$DEPTH_DIR" ] || DEPTH_DIR=$(dirname "$BIN")
BOARD_MODEL=$(arg board.model)
# Camera rates: vivid's 25 fps and a 30 fps MJPEG webcam, unless the board asks for lower ones
# (board.fps, board.mjpegfps, board.depthfps): vivid renders each frame, and the MJPEG feeder and facekit decode
# it, on the emulated CPU, and aarch64 under TCG cannot keep 25-30 fps without skipped frames.
FPS=$(arg board.fps); [ -n "$FPS" ] || FPS=25
MJPEG_FPS=$(arg board.mjpegfps); [ -n "$MJPEG_FPS" ] || MJPEG_FPS=30
DEPTH_FPS=$(arg board.depthfps); [ -n "$DEPTH_FPS" ] || DEPTH_FPS=$FPS
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v t0="$1" '{printf "%.2f", $1 - t0}' /proc/uptime; }
# JSIMD_FORCENONE: libjpeg-turbo's SSE2/AVX2 paths run 3x slower than its C code under QEMU's TCG
# (measured: 47 vs 15 ms per 640x480 frame), which would make a 30 fps MJPEG camera drop frames
# for reasons no real board has. Real hardware keeps SIMD.
fk() { chroot /host env JSIMD_FORCENONE=1 "$BIN" "$@"; }
# fkbg ARGS... > OUT &-style background run whose $! is facekit itself (chroot and env exec), so
# `kill $!` stops it; a backgrounded shell function would leave facekit running in a subshell.
fkbg() { ( exec chroot /host env JSIMD_FORCENONE=1 "$BIN" "$@" ) & }
# stopbg PID|PIDFILE: stop a background facekit and wait until it is gone (its descriptors are
# closed): v4l2loopback refuses a new producer's format while the old one still holds the device.
stopbg() {
  p=$1; [ -f "$p" ] && { p=$(cat "$1"); rm -f "$1"; }
  [ -n "$p" ] || return 0
  kill "$p" 2>/dev/null
  i=0; while [ -e /proc/$p ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -e /proc/$p ] && kill -9 "$p" 2>/dev/null
  return 0
}
# waitline PATTERN FILE TENTHS: wait until FILE contains PATTERN.
waitline() {
  i=0; while ! grep -q "$1" "$2" 2>/dev/null && [ $i -lt "$3" ]; do sleep 0.1; i=$((i + 1)); done
  grep -q "$1" "$2" 2>/dev/null
}
# json NAME FILE: hands a JSON document to the host (saved as results/NAME.json).
json() { echo "BOARD: JSON $1 $(tr -d '\n' < "$2")"; }
qmp() { echo "BOARD: QMP $1"; }
fail() { echo "FAIL: $*"; exit 1; }
# waitfor present|absent PATH TENTHS
waitfor() {
  i=0; while [ $i -lt "$3" ]; do
    if [ "$1" = present ]; then [ -e "$2" ] && return 0; else [ -e "$2" ] || return 0; fi
    sleep 0.1; i=$((i + 1)); done; return 1
}
# Scratch space inside the chroot (the host root itself is read-only).
RUN=/host/run
