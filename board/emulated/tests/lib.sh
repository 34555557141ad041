# Sourced by board/emulated/init before each guest test (busybox sh). The host root is mounted
# read-only at /host with the guest's /proc, /sys, /dev over it and a tmpfs on /host/run, so
# `fk` runs the host-built facekit binary with the host's libraries against the guest's devices.
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
REPO=$(arg board.repo)
BIN=$(arg board.bin)
MEDIA=$(arg board.media)
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v t0="$1" '{printf "%.2f", $1 - t0}' /proc/uptime; }
# JSIMD_FORCENONE: libjpeg-turbo's SSE2/AVX2 paths run 3x slower than its C code under QEMU's TCG
# (measured: 47 vs 15 ms per 640x480 frame), which would make a 30 fps MJPEG camera drop frames
# for reasons no real board has. Real hardware keeps SIMD.
fk() { chroot /host env JSIMD_FORCENONE=1 "$BIN" "$@"; }
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
