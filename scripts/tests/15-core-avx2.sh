#!/usr/bin/env bash
# FaceCore's kernel and engine tests on the CPU-specific AVX2 build. `swift test` checks the
# portable build and 50-arm-core.sh the ARM ones, but FACEKIT_WIDE_VECTORS has kernel forms of its
# own (4 × 16 tiles, VPMULLD/VPMULDQ requantization, 16-element ADD → PRELU), so the optimized
# kernels of that build are checked bit-exact against the references too. Package.swift applies
# FACEKIT_CPU to release builds only, so the tests build in a small package of their own
# (.cache/avx2-core: FaceCore and its tests, linked in) with the AVX2 flags. Skipped (passes) on a
# CPU without AVX2, where that build cannot run.
source "$(dirname "$0")/../lib/common.sh"
grep -qw avx2 /proc/cpuinfo || { log "this CPU has no AVX2: the AVX2 build cannot run here; skipped"; exit 0; }
t0=$SECONDS
P="$CACHE/avx2-core"
mkdir -p "$P/Sources" "$P/Tests"
for m in FaceCore CAllocationCounter; do ln -sfn "$REPO/Sources/$m" "$P/Sources/$m"; done
ln -sfn "$REPO/Tests/FaceCoreTests" "$P/Tests/FaceCoreTests"
# The tests find models/ and testdata/ beside their package (#filePath, not resolved through links).
for d in models testdata; do ln -sfn "$REPO/$d" "$P/$d"; done
cat > "$P/Package.swift" <<'EOF'
// swift-tools-version:6.0
// Written by scripts/tests/15-core-avx2.sh: FaceCore's tests on the AVX2 build.
import PackageDescription
let avx2: [String] = ["-O", "-target-cpu", "haswell", "-D", "FACEKIT_WIDE_VECTORS"]
let package = Package(name: "avx2core", targets: [
    .target(name: "FaceCore", swiftSettings: [.unsafeFlags(avx2)]),
    .target(name: "CAllocationCounter"),
    .testTarget(name: "FaceCoreTests", dependencies: ["FaceCore", "CAllocationCounter"]),
])
EOF
cd "$P"
swift build --build-tests > build.log 2>&1 || { tail -20 build.log; log "FAIL: the AVX2 build of FaceCore's tests did not compile"; exit 1; }
# The kernels against their references, the engine (fused steps, no allocation per inference)
# and the accuracy of the int8 models: every suite that runs the optimized kernels.
rc=0
(cd "$REPO" && "$P/.build/debug/avx2corePackageTests.xctest" --testing-library swift-testing \
  --filter "QuantizedKernelTests|EngineTests|QuantizedAccuracyTests") > test.log 2>&1 || rc=$?
grep -E "✘|Test run with" test.log | tail -20 || true
[ "$rc" = 0 ] || { log "FAIL: FaceCore's tests on the AVX2 build (log: $P/test.log)"; exit 1; }
log "AVX2 build: FaceCore's kernel, engine and accuracy tests pass; $((SECONDS - t0)) s"
