#!/usr/bin/env bash
# The kiosk's systemd unit (rootfs-overlay/etc/systemd/system/facekit.service): systemd's own
# offline checks. `systemd-analyze security` must rate its exposure at most 3.0 (the issue's
# bound; it was 1.5 when written), and the default config it starts with must validate.
source "$(dirname "$0")/../lib/common.sh"
UNIT="$REPO/rootfs-overlay/etc/systemd/system/facekit.service"
MAX=3.0
rc=0
command -v systemd-analyze >/dev/null || die "systemd-analyze missing: apt-get install systemd (scripts/install-deps)"
out=$(systemd-analyze security --offline=true "$UNIT" 2>&1) || true
level=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for facekit.service: \([0-9.]*\).*/\1/p')
if [ -z "$level" ]; then
  printf '%s\n' "$out" | tail -5; echo "FAIL: kiosk unit: no exposure level from systemd-analyze"; rc=1
elif awk -v l="$level" -v m="$MAX" 'BEGIN { exit !(l <= m) }'; then
  echo "PASS: kiosk unit: systemd-analyze security exposure $level (<= $MAX)"
else
  printf '%s\n' "$out" | grep '✗' || true
  echo "FAIL: kiosk unit: systemd-analyze security exposure $level > $MAX"; rc=1
fi
for key in Type=notify WatchdogSec= ProtectSystem=strict PrivateNetwork=yes "ReadWritePaths=/var/lib/facekit" DevicePolicy=closed; do
  if grep -q "^$key" "$UNIT"; then echo "PASS: kiosk unit: $key"; else echo "FAIL: kiosk unit: $key missing"; rc=1; fi
done
# The Lab Streaming Layer drop-in (installed when lsl is enabled): the unit with it must stay at
# or below 2.5, and every check the plain unit passes must still pass, except the three about
# the network that the drop-in exists to open.
DROPIN="$REPO/rootfs-overlay/usr/share/facekit/systemd/facekit.service.d/lsl.conf"
LSLMAX=2.5
R="$(mktemp -d -t facekit-unit.XXXXXX)"
mkdir -p "$R/etc/systemd/system/facekit.service.d"
cp "$UNIT" "$R/etc/systemd/system/"; cp "$DROPIN" "$R/etc/systemd/system/facekit.service.d/"
lsl_out=$(systemd-analyze security --offline=true --root="$R" facekit.service 2>&1) || true
rm -rf "$R"
lsl_level=$(printf '%s\n' "$lsl_out" | sed -n 's/.*Overall exposure level for facekit.service: \([0-9.]*\).*/\1/p')
if [ -n "$lsl_level" ] && awk -v l="$lsl_level" -v m="$LSLMAX" 'BEGIN { exit !(l <= m) }'; then
  echo "PASS: kiosk unit + LSL drop-in: systemd-analyze security exposure $lsl_level (<= $LSLMAX)"
else
  printf '%s\n' "$lsl_out" | grep '✗' || true; echo "FAIL: kiosk unit + LSL drop-in: exposure ${lsl_level:-unknown} > $LSLMAX"; rc=1
fi
passed() { printf '%s\n' "$1" | sed -n 's/^✓ \([^ ]*\).*/\1/p' | sort; }
lost=$(comm -23 <(passed "$out") <(passed "$lsl_out") | grep -vE '^(PrivateNetwork=|RestrictAddressFamilies=~AF_\(INET\|INET6\)|IPAddressDeny=)$' || true)
if [ -z "$lost" ]; then echo "PASS: LSL drop-in keeps every other hardening ($(passed "$lsl_out" | wc -l) checks pass)"
else echo "FAIL: LSL drop-in loses: $lost"; rc=1; fi
grep -q '^PrivateNetwork=no' "$DROPIN" && ! grep -qvE '^(#|$|\[Service\]|PrivateNetwork=|RestrictAddressFamilies=|IPAddressAllow=)' "$DROPIN" \
  && echo "PASS: LSL drop-in sets only PrivateNetwork, RestrictAddressFamilies, IPAddressAllow" \
  || { echo "FAIL: LSL drop-in sets more than the network"; rc=1; }
BIN=${FACEKIT_BIN:-$REPO/.build/release/facekit}
if [ -x "$BIN" ]; then
  if "$BIN" run --config "$REPO/rootfs-overlay/etc/facekit/facekit.json" --check-config; then
    echo "PASS: kiosk default config validates"
  else echo "FAIL: kiosk default config"; rc=1; fi
  # The generator links the drop-in exactly when the config turns LSL on (the shipped config
  # does not), and never for a config that does not validate.
  GEN="$REPO/rootfs-overlay/usr/lib/systemd/system-generators/facekit-lsl-generator"
  generated() {  # generated CONFIG-FILE: the drop-in the generator links in a fresh output directory, or "none"
    local g; g="$(mktemp -d -t facekit-gen.XXXXXX)"
    FACEKIT_BIN="$BIN" FACEKIT_CONFIG="$1" FACEKIT_LSL_DROPIN="$DROPIN" sh "$GEN" "$g/out"
    [ -z "$(ls -A "$g/out" 2>/dev/null | grep -v '^facekit.service.d$')" ] || echo "unexpected files"
    readlink "$g/out/facekit.service.d/lsl.conf" 2>/dev/null || echo none
    rm -rf "$g"
  }
  C="$(mktemp -d -t facekit-gen-config.XXXXXX)"
  echo '{"lsl": {"enabled": true}}' > "$C/on.json"; echo '{"lsl": {"enabled": false}}' > "$C/off.json"
  echo '{"lsl": {"enabled": true}, "nonsense": 1}' > "$C/bad.json"
  on=$(generated "$C/on.json"); off=$(generated "$C/off.json"); bad=$(generated "$C/bad.json")
  shipped=$(generated "$REPO/rootfs-overlay/etc/facekit/facekit.json")
  rm -rf "$C"
  if [ "$on" = "$DROPIN" ] && [ "$off" = none ] && [ "$bad" = none ] && [ "$shipped" = none ]; then
    echo "PASS: LSL generator: drop-in linked with lsl.enabled, not without, not for an invalid config, not for the shipped one"
  else echo "FAIL: LSL generator: on=$on off=$off invalid=$bad shipped=$shipped"; rc=1; fi
fi
exit $rc
