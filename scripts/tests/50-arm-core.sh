#!/usr/bin/env bash
# FaceCore on ARM: the Embedded-Swift aarch64 builds (scripts/build-core-arm) run under
# qemu-aarch64-static, on an emulated Cortex-A72 (portable build) and Cortex-A76 (dot-product
# build), and must be byte-identical to the host build of the same driver:
#   - the three int8 models (detector, landmarks, blendshapes) on every real face crop in
#     testdata/reference/model-io/<model>/*/input.npy: int16 output tensors and float outputs;
#   - reference vs optimized conv2d / depthwise kernels: random geometries, and every conv layer
#     of one real inference per model (on each target, and the hashes compared across targets);
#   - ADD and ADD + PRELU in every kernel copy vs their scalar formula: random layouts, and
#     parameters at and beyond the edges of the NEON forms' guards;
#   - the ROI warp's sampling kernel in every kernel copy vs its reference, on fenced images,
#     and its source positions vs OpenCV's division, on random bounded matrices.
# Fails too when FaceCore stops compiling in Embedded Swift, and when scripts/arm-codegen-report
# --check does: a hot kernel gone from a copy, a dot-product kernel without SDOT, or a dot-product
# instruction anywhere in the portable (Cortex-A72) build.
# The model file is converted by the host driver (the same steps as `facekit model convert`) into
# .cache/arm-core/facekit.fkm, or taken from $FACEKIT_ARM_FKM.
source "$(dirname "$0")/../lib/common.sh"
t0=$SECONDS
W="$CACHE/arm-core"
B="$W/build"
"$REPO/scripts/build-core-arm" || { log "FAIL: the Embedded-Swift build of FaceCore (or its driver) is broken"; exit 1; }
log "builds ready after $((SECONDS - t0)) s"
cd "$REPO"
rc=0
"$REPO/scripts/arm-codegen-report" --check || { rc=1; log "FAIL: scripts/arm-codegen-report --check (above)"; }

# Inputs: real crops of the model-io references, in a fixed order: $ARM_CORE_CASES per model,
# evenly spaced (default 10; emulation runs ~20-30x slower than the host), or "all".
per=${ARM_CORE_CASES:-10}
mkdir -p "$W/run"
list="$W/run/cases.txt"; : > "$list"
for k in detector landmarks blendshapes; do
  all=("$TESTDATA"/reference/model-io/$k/*/input.npy)
  [ -e "${all[0]}" ] || continue
  n=${#all[@]}
  if [ "$per" = all ] || [ "$per" -ge "$n" ]; then pick=$(seq 0 $((n - 1))); else pick=$(for i in $(seq 0 $((per - 1))); do echo $((i * n / per)); done); fi
  for i in $pick; do echo "$k ${all[$i]}" >> "$list"; done
done
[ -s "$list" ] || die "no inputs in testdata/reference/model-io: run scripts/fetch-testdata and scripts/reference/make-references (or scripts/test)"

# The model file.
source "$REPO/scripts/arm-core-lib/model.sh"
arm_core_model

# Host reference, then both ARM targets under qemu (in parallel: two cores).
run_target() {  # name, command prefix...
  local name=$1; shift
  local d="$W/run/$name"; rm -rf "$d"; mkdir -p "$d"
  local s=$SECONDS rc=0
  { "$@" kernels 400 && "$@" models "$fkm" "$list" "$d" --check-kernels; } > "$d/stdout.txt" 2>&1 || rc=$?
  echo "$((SECONDS - s))" > "$d/seconds"
  return $rc
}
run_target host "$B/host/armcore" || { rc=1; log "FAIL: host run"; }
run_target cortex-a72 qemu-aarch64-static -cpu cortex-a72 "$B/cortex-a72/armcore" & p72=$!
run_target cortex-a76 qemu-aarch64-static -cpu cortex-a76 "$B/cortex-a76/armcore" & p76=$!
wait $p72 || { rc=1; log "FAIL: cortex-a72 run exited non-zero"; }
wait $p76 || { rc=1; log "FAIL: cortex-a76 run exited non-zero"; }

# Report and compare: hashes without the timing field, and the output files byte for byte.
# Times and the list of kernel copies differ between targets (the A76 build also checks its
# dot-product copy against the reference); the results must not.
strip() { sed -E 's/, [0-9]+ ms per inference//; s/; kernel copies: [a-z0-9+]+//' "$1"; }
for t in host cortex-a72 cortex-a76; do
  echo "== $t ($(cat "$W/run/$t/seconds") s)"
  cat "$W/run/$t/stdout.txt"
done
n=0
for t in cortex-a72 cortex-a76; do
  if ! diff <(strip "$W/run/host/stdout.txt") <(strip "$W/run/$t/stdout.txt") > /dev/null; then
    rc=1; log "FAIL: $t printed different results from the host:"
    diff <(strip "$W/run/host/stdout.txt") <(strip "$W/run/$t/stdout.txt") >&2 || true
  fi
  for k in detector landmarks blendshapes; do
    if cmp -s "$W/run/host/$k.bin" "$W/run/$t/$k.bin" && [ -s "$W/run/host/$k.bin" ]; then
      n=$((n + 1)); echo "bit-exact: $t $k ($(grep -c "^$k " "$list") cases, $(stat -c %s "$W/run/$t/$k.bin") bytes)"
    else
      rc=1; log "FAIL: $t $k differs from the host: $(cmp "$W/run/host/$k.bin" "$W/run/$t/$k.bin" 2>&1 | head -1)"
    fi
  done
done
# The A76 run went through the dot-product copy (its models included: QuantizedEngine's default
# is the best copy the CPU runs).
grep -q "kernel copies: baseline+dotprod" "$W/run/cortex-a76/stdout.txt" \
  || { rc=1; log "FAIL: cortex-a76 did not run the dot-product kernel copy"; }
log "arm core: $n of 6 model runs bit-exact with the host; $((SECONDS - t0)) s in all"
exit $rc
