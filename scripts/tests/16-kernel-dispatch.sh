#!/usr/bin/env bash
# The portable build's run-time kernel choice (FaceCore/KernelISA.swift) on other x86_64 CPUs:
# the release binary runs each fixed-point model on a real face crop under qemu-x86_64 emulating
#   Nehalem (SSE4.2, no AVX): the baseline kernels must be chosen, and must run: QEMU faults on
#            any AVX instruction there (a FACEKIT_CPU=haswell build dies with SIGILL), so a
#            baseline path that reached the AVX2 copy would fail here;
#   Haswell, EPYC (AVX2):     the AVX2 kernels must be chosen (core2duo, SSSE3 only: baseline);
#   Cascadelake-Server (AVX-512 with VNNI): QEMU's TCG cannot run AVX-512 and hides it from the
#            emulated CPUID, so this CPU must get the AVX2 copy (an AVX-512 instruction reached
#            there would fault); the AVX-512 copy is checked natively, where the host has it;
# and natively with each copy. The copy expected on each CPU is the one glibc's own CPUID reading
# implies (x86-64-v4 with VNNI, x86-64-v3 or neither). Every run's outputs must be byte-identical.
source "$(dirname "$0")/../lib/common.sh"
FACEKIT="${FACEKIT:-$REPO/.build/release/facekit}"
[ -x "$FACEKIT" ] || die "no facekit binary at $FACEKIT (swift build -c release)"
[ "$(uname -m)" = x86_64 ] || { log "not an x86_64 host: the x86 kernel copies are not built here; skipped"; exit 0; }
command -v qemu-x86_64-static >/dev/null || "$REPO/scripts/install-deps"   # qemu-user-static is in its list
W="$(mktemp -d /tmp/facekit-dispatch.XXXXXX)"; trap 'rm -rf "$W"' EXIT
log "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); $(qemu-x86_64-static --version | head -1)"
# Which copy each CPU should get comes from glibc: its dynamic loader reads CPUID itself and says
# whether the CPU (real or emulated) is x86-64-v4 or x86-64-v3, the levels FaceKernelsAVX512 and
# FaceKernelsAVX2 are built for. An independent oracle for CCPUFeatures' check. VNNI, which the
# AVX-512 copy also needs, is no glibc level: the caller says whether the CPU has it ($2).
# Empty when the loader cannot say (it prints the levels since glibc 2.33).
glibc_kernels() {
  local levels
  # shellcheck disable=SC2086
  levels=$($1 /lib64/ld-linux-x86-64.so.2 --help 2>/dev/null | grep "x86-64-v" || true)
  case $levels in
    *"x86-64-v4 (supported"*) [ "$2" = vnni ] && echo avx512 || echo avx2;;
    *"x86-64-v3 (supported"*) echo avx2;;
    *x86-64-v2*) echo baseline;;
  esac
}
host_vnni=$(grep -qw avx512_vnni /proc/cpuinfo && echo vnni || echo none)
native_best=$(glibc_kernels "" "$host_vnni")
runs=("native-best|$native_best|" "native-baseline|baseline|")   # name | expected kernels | command prefix
[ "$native_best" = avx512 ] && runs+=("native-avx2|avx2|")
[ "$native_best" = avx512 ] || log "this host has no AVX-512 with VNNI: the AVX-512 copy is not run here"
# The emulated runs need a qemu-x86_64 that can run this host's own dynamic binaries; some
# sandboxes cannot (then only the native runs are checked, and the skip is said).
for cpu in core2duo Nehalem Haswell EPYC Cascadelake-Server; do
  if timeout 120 qemu-x86_64-static -cpu "$cpu" /bin/true 2> "$W/probe-$cpu.err"; then
    vnni=none; [ "$cpu" = Cascadelake-Server ] && vnni=vnni
    want=$(glibc_kernels "qemu-x86_64-static -cpu $cpu" $vnni)
    if [ -z "$want" ]; then
      case $cpu in Haswell|EPYC|Cascadelake-Server) want=avx2;; *) want=baseline;; esac
      log "glibc's loader did not name the emulated $cpu's level; expecting the $want kernels from the model's documented features"
    fi
    case $cpu/$want in
      core2duo/baseline|Nehalem/baseline|Haswell/avx2|EPYC/avx2) ;;
      Cascadelake-Server/avx2) log "the emulated $cpu has no AVX-512 here (QEMU's TCG does not implement it): expecting the AVX2 copy";;
      Cascadelake-Server/avx512) log "this QEMU emulates AVX-512: the emulated $cpu must get the AVX-512 copy";;
      *) log "SKIP: glibc finds the emulated $cpu at the $want level (this QEMU's model differs); checked as such";;
    esac
    runs+=("${cpu,,}|$want|timeout 900 qemu-x86_64-static -cpu $cpu")
  else
    log "SKIP: qemu-x86_64 -cpu $cpu cannot run /bin/true on this host: $(grep -v "TCG doesn't support" "$W/probe-$cpu.err" | tail -1)"
  fi
done
cd "$REPO"
"$FACEKIT" model convert "$MODELS/face_landmarker_v2.task" -o "$W/facekit.fkm" >/dev/null
fail=0
for kind in detector landmarks blendshapes; do
  # A glob, not `ls | head`: under pipefail a SIGPIPE in ls would end the script silently.
  inputs=("$TESTDATA"/reference/model-io/$kind/*/input.npy); input="${inputs[0]}"
  [ -e "$input" ] || die "no $kind input in testdata/reference/model-io (scripts/reference/make-references)"
  for run in "${runs[@]}"; do
    IFS='|' read -r name want prefix <<< "$run"
    extra=()
    case $name in native-baseline) extra=(--kernels baseline);; native-avx2) extra=(--kernels avx2);; esac
    rc=0
    # shellcheck disable=SC2086
    $prefix "$FACEKIT" model run "$W/facekit.fkm" --model $kind --input "$input" --output-dir "$W/$kind-$name" "${extra[@]}" \
      2> "$W/$kind-$name.err" || rc=$?
    if [ "$rc" != 0 ]; then
      why=""; [ "$rc" = 132 ] && why=" (SIGILL: an instruction this CPU does not have)"; [ "$rc" = 124 ] && why=" (timed out)"
      log "FAIL: $kind on $name: exit $rc$why"; grep -v "TCG doesn't support" "$W/$kind-$name.err" | tail -8 >&2 || true; fail=1; continue
    fi
    got=$(sed -n 's/^kernels: //p' "$W/$kind-$name.err")
    if [ -n "$want" ] && [ "$got" != "$want" ]; then log "FAIL: $kind on $name ran the '$got' kernels, not '$want'"; fail=1; fi
    for f in "$W/$kind-native-best"/output*.npy; do
      [ "$name" = native-best ] && break
      cmp -s "$f" "$W/$kind-$name/$(basename "$f")" || { log "FAIL: $kind on $name: $(basename "$f") differs from the native run"; fail=1; }
    done
    log "$kind on $name: $got kernels"
  done
done
[ "$fail" = 0 ] || { log "FAIL: the kernel choice or its outputs"; exit 1; }
log "PASS: $(( ${#runs[@]} * 3 )) runs (${runs[*]%%|*}) chose the expected kernels; outputs byte-identical"
