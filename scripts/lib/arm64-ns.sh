# Sourced: in_arm64_ns CMD... runs CMD as root of a new user namespace (with its own mount and pid
# namespaces) whose own binfmt_misc instance runs aarch64 ELF files with qemu-aarch64-static.
# The machine's binfmt_misc is neither mounted nor changed, and every mount made inside ends with
# the namespace (Linux >= 6.7 gives each user namespace its own binfmt_misc).
#  - uids and gids 0-65535 map onto themselves, so dpkg and tar can chown to system users; unshare
#    writes a map of more than one id only through newuidmap (which wants /etc/subuid entries), so
#    the map is written from here, as root, while the child waits for it.
#  - flag F: the interpreter is opened at registration, so it also runs inside any chroot.
in_arm64_ns() {
  local qemu ns
  qemu=$(command -v qemu-aarch64-static) || { echo "qemu-aarch64-static is missing: run scripts/install-deps" >&2; return 1; }
  unshare --user --mount --pid --fork --mount-proc --propagation private bash -c '
    while [ -z "$(cat /proc/self/uid_map)" ]; do sleep 0.05; done
    set -e
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    printf "%s" ":facekit-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:$0:F" \
      > /proc/sys/fs/binfmt_misc/register
    exec "$@"' "$qemu" "$@" &
  ns=$!
  for _ in $(seq 200); do
    [ "$(readlink "/proc/$ns/ns/user" 2>/dev/null)" != "$(readlink /proc/self/ns/user)" ] && break
    sleep 0.05
  done
  echo "0 0 65536" > "/proc/$ns/uid_map" && echo "0 0 65536" > "/proc/$ns/gid_map" || { kill "$ns"; return 1; }
  wait "$ns"
}
