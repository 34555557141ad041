#!/usr/bin/env bash
# facekit for aarch64: scripts/build-arm compiles the whole tree (products and every test target)
# with Debian 13's Swift 6.0.3 for aarch64 and makes the arm64 package; this checks the package
# (contents, Depends, maintainer scripts, lintian) and runs its facekit under qemu-aarch64-static
# against the sysroot's libraries: the packaged model is readable, and tracking
# testdata/single_face.mp4 gives landmarks, blend shapes and metadata bit-identical to the host
# build's. The kiosk on an emulated ARM board with the package installed is 55-arm-board.sh.
source "$(dirname "$0")/../lib/common.sh"
rc=0
check() { local d=$1; shift; if "$@"; then echo "PASS: arm package: $d"; else echo "FAIL: arm package: $d"; rc=1; fi; }
t0=$SECONDS
"$REPO/scripts/build-arm" --tests || { echo "FAIL: arm package: scripts/build-arm"; exit 1; }
echo "ARM-FIGURE: build_seconds=$((SECONDS - t0))"
DEB=$(ls "$CACHE"/arm/out/facekit_*_arm64.deb | tail -1)
S="$CACHE/arm/sysroot-arm64"
echo "ARM-FIGURE: deb=$(basename "$DEB") bytes=$(stat -c %s "$DEB") installed_kb=$(dpkg-deb -f "$DEB" Installed-Size)"

W=$(mktemp -d -t facekit-armpkg.XXXXXX); trap 'rm -rf "$W"' EXIT
dpkg-deb -x "$DEB" "$W/root"; dpkg-deb -e "$DEB" "$W/DEBIAN"
has() { [ -e "$W/root/$1" ]; }
# Paths inside the package, relative to the tree it is extracted to.
PKG_BIN=usr/bin/facekit PKG_MODEL=usr/share/facekit/facekit.fkm
FK="$W/root/$PKG_BIN"   # the packaged binary
check "files in place" has "$PKG_BIN"
for f in usr/bin/facekit-depth-host usr/lib/facekit/depth/libfacekit-depth-replay.so usr/lib/facekit/depth/libfacekit-depth-v4l2.so \
         usr/share/facekit/facekit.fkm usr/share/facekit/geometry_pipeline_metadata_landmarks.binarypb etc/facekit/facekit.json \
         usr/lib/systemd/system/facekit.service usr/lib/tmpfiles.d/facekit.conf usr/share/doc/facekit/copyright \
         usr/share/man/man1/facekit.1.gz; do
  has "$f" || { echo "FAIL: arm package: $f missing"; rc=1; }
done
arch_of() { aarch64-linux-gnu-readelf -h "$W/root/$1" | grep -q 'Machine: *AArch64'; }
check "facekit is an aarch64 executable" arch_of "$PKG_BIN"
check "the depth host is an aarch64 executable" arch_of usr/bin/facekit-depth-host
# The Swift runtime is linked in: nothing from libswiftlang is needed on the target.
no_swift_runtime() { ! aarch64-linux-gnu-readelf -d "$FK" | grep -q 'libswift\|libFoundation\|libdispatch'; }
check "facekit needs no Swift runtime library" no_swift_runtime
deps=$(dpkg-deb -f "$DEB" Depends); echo "  Depends: $deps"
deps_ok() { for p in libc6 libstdc++6 libgcc-s1 libhdf5-310 libv4l-0t64 libjpeg62-turbo zlib1g libdrm2; do
  case ", $deps" in *", $p"*) ;; *) echo "  Depends lacks $p"; return 1 ;; esac; done; }
check "Depends names the runtime libraries" deps_ok
enables_nothing() {  # commands only: the scripts' comments tell the owner how to enable it
  ! grep -hv '^ *#' "$W"/DEBIAN/post* "$W"/DEBIAN/pre* | grep -qE 'systemctl +(enable|start)|deb-systemd-helper +enable|deb-systemd-invoke +start'; }
check "maintainer scripts enable and start nothing" enables_nothing
check "conffile /etc/facekit/facekit.json" grep -qx /etc/facekit/facekit.json "$W/DEBIAN/conffiles"
lintian_clean() { ! grep -q '^E: ' "$CACHE/arm/out/lintian-arm64.txt"; }
check "lintian: no errors ($(grep -c '^W: ' "$CACHE/arm/out/lintian-arm64.txt") warnings)" lintian_clean

# Under qemu-user, the package's own binary and model against the sysroot's libraries.
HOST="$REPO/.build/release/facekit"
[ -x "$HOST" ] || (cd "$REPO" && swift build -c release 2>&1 | tail -1)
arm() { qemu-aarch64-static -L "$S" "$FK" "$@"; }
check "facekit model info on the packaged model (aarch64)" arm model info "$W/root/$PKG_MODEL"
same_model() { "$HOST" model convert "$MODELS/face_landmarker_v2.task" -o "$W/host.fkm" > /dev/null && cmp -s "$W/host.fkm" "$W/root/$PKG_MODEL"; }
check "the packaged model is the host conversion, byte for byte" same_model
t=$SECONDS
arm process "$TESTDATA/single_face.mp4" --model "$W/root/$PKG_MODEL" --out "$W/arm" --format hdf5 \
  --participant armcheck --store "$W/store-arm" > "$W/arm.log" 2>&1 || { tail -5 "$W/arm.log"; echo "FAIL: arm package: process under qemu-aarch64"; rc=1; }
echo "ARM-FIGURE: process_single_face_qemu_user_seconds=$((SECONDS - t))"
"$HOST" process "$TESTDATA/single_face.mp4" --model "$W/root/$PKG_MODEL" --out "$W/x86" --format hdf5 \
  --participant armcheck --store "$W/store-x86" > "$W/x86.log" 2>&1 || { tail -5 "$W/x86.log"; echo "FAIL: arm package: process on the host"; rc=1; }
PY="$VENV/bin/python"; [ -x "$PY" ] || PY=python3
check "aarch64 and x86_64 exports are bit-identical (h5py)" "$PY" "$REPO/scripts/board/compare-exports.py" "$W/x86" "$W/arm"
echo "ARM-FIGURE: total_seconds=$((SECONDS - t0))"
exit $rc
