# Sourced by scripts/tests/50-arm-core.sh and scripts/arm-bench: makes the model file
# $W/facekit.fkm with the host driver (Quantizer.convert, like `facekit model convert`), cached on
# the host build, the bundle and the calibration list; honours $FACEKIT_ARM_FKM. Sets $fkm.
arm_core_model() {
  local W="$CACHE/arm-core" B="$CACHE/arm-core/build"
  if [ -n "${FACEKIT_ARM_FKM:-}" ]; then fkm="$FACEKIT_ARM_FKM"; return 0; fi
  fkm="$W/facekit.fkm"
  mkdir -p "$W/run"
  local calib="$W/run/calibration.txt"; : > "$calib"
  for k in detector landmarks blendshapes; do
    for f in $(ls "$TESTDATA/reference/calibration/$k/" 2>/dev/null | grep '\.npy$' | LC_ALL=C sort); do
      echo "$k $TESTDATA/reference/calibration/$k/$f" >> "$calib"
    done
  done
  [ -s "$calib" ] || die "no calibration inputs in testdata/reference/calibration (scripts/reference/make-references)"
  local key; key=$( { cat "$B/host/.key"; sha256sum "$MODELS/face_landmarker_v2.task"; cat "$calib"; } | sha256sum | cut -c1-16)
  if [ ! -s "$fkm" ] || [ "$(cat "$fkm.key" 2>/dev/null)" != "$key" ]; then
    "$B/host/armcore" convert "$MODELS/face_landmarker_v2.task" "$calib" "$fkm.tmp" > "$W/run/convert.log" 2>&1 \
      || { cat "$W/run/convert.log" >&2; die "model conversion failed"; }
    mv "$fkm.tmp" "$fkm"; echo "$key" > "$fkm.key"
    log "converted the models into $fkm"
  fi
}
