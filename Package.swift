// swift-tools-version:6.0
// facekit — one package: library modules, thin C shims, and the `facekit` executable.
// Dependency arrows point one way:
//   FaceKernelTypes ← FaceKernels (+ FaceKernelsAVX2, FaceKernelsAVX512 on x86_64) ← FaceCore ← FaceTracking ← (facekit)
//   FaceKernelTypes ← FaceModelFormats ← FaceCore
//   CV4L2, CJPEG ← Capture
//   CJPEG ← Recording ← Export → CHDF5, CJPEG (report thumbnails)
//   CGPIO ← GPIO ← Appliance → Recording, Export, Capture, FaceTracking
//   LinuxSystem (every syscall, Errno, EINTR retry, CLOCK_MONOTONIC, atomic files) ← every module
//   that does I/O: Capture, GPIO, Recording, Export, Depth, Appliance, facekit
import PackageDescription

// A deployment may build FaceCore for its exact CPU: FACEKIT_CPU=cortex-a76 (dot product),
// FACEKIT_CPU=haswell (AVX2), … The default is the portable baseline of the architecture.
let cpu = Context.environment["FACEKIT_CPU"]
// x86 CPUs with AVX2 (16 registers of 8 int32 lanes) also get FACEKIT_WIDE_VECTORS: FaceCore's
// convolution then keeps 4 pixels × 16 channels of accumulators in registers, which the
// portable SSE2 build (16 registers of 4 lanes) would spill.
let wideVectorCPUs = ["haswell", "broadwell", "skylake", "skylake-avx512", "cascadelake", "icelake-client", "icelake-server",
                      "tigerlake", "alderlake", "sapphirerapids", "znver1", "znver2", "znver3", "znver4"]
let cpuFlags: [String] = cpu.map { ["-target-cpu", $0] + (wideVectorCPUs.contains($0) ? ["-D", "FACEKIT_WIDE_VECTORS"] : []) } ?? []
// Optimized even in debug builds: the test suite runs real models through FaceCore.
let coreSettings: [SwiftSetting] = [.unsafeFlags(["-Ounchecked"] + cpuFlags, .when(configuration: .release)),
                                    .unsafeFlags(["-O"], .when(configuration: .debug))]
// The x86_64 build's second copy of the kernels, for CPUs with AVX2 (x86-64-v3), which FaceCore
// runs when CPUID says it can (KernelISA). `#if arch` here is the machine that builds, not the
// one the build is for, so a cross build names its target: FACEKIT_TARGET_ARCH=aarch64
// (scripts/build-arm).
#if arch(x86_64)
let buildArch = "x86_64"
#elseif arch(arm64)
let buildArch = "aarch64"
#else
let buildArch = "other"
#endif
let targetArch = Context.environment["FACEKIT_TARGET_ARCH"] ?? buildArch
// aarch64's second copy, FaceKernelsDotProd, is built for cores with the Armv8.2 dot product
// (Cortex-A76, A55: Raspberry Pi 5, RK3588) and holds the SDOT convolution (FACEKIT_DOTPROD);
// FaceCore runs it when AT_HWCAP reports the feature.
let kernelCopies: [Target.Dependency] = targetArch == "x86_64" ? ["FaceKernelsAVX2", "FaceKernelsAVX512"] : targetArch == "aarch64" ? ["FaceKernelsDotProd"] : []
let dotprodFlags = ["-target-cpu", "cortex-a76", "-D", "FACEKIT_DOTPROD"]
// (Named haswell: the compiler's C importer takes no "x86-64-v3". Haswell's extra features, AES,
// PCLMUL, RDRAND, FSGSBASE, INVPCID, XSAVEOPT and ERMSB, are never emitted for plain code, so the
// x86-64-v3 check is the one that matters: CCPUFeatures.)
let cOnlyLink: [LinkerSetting] = [.unsafeFlags(["-nostartfiles"])]
let avx2Flags = ["-target-cpu", "haswell", "-D", "FACEKIT_WIDE_VECTORS", "-D", "FACEKIT_AVX2"]
// The third x86_64 copy, FaceKernelsAVX512: x86-64-v4 (AVX-512 F, CD, BW, DQ, VL) with AVX512-VNNI,
// whose VPDPWSSD is PMADDWD and the accumulating add in one instruction. Named cascadelake, the
// first CPU with exactly that set (the C importer takes no "x86-64-v4"); Cascade Lake's other
// features are never emitted for plain code. CPUs with AVX-512 but no VNNI (Skylake-SP) run the
// AVX2 copy. FACEKIT_AVX512 selects its 32-channel tile (32 vector registers).
let avx512Flags = ["-target-cpu", "cascadelake", "-D", "FACEKIT_WIDE_VECTORS", "-D", "FACEKIT_AVX512"]

let package = Package(
    name: "facekit",
    products: [
        .executable(name: "facekit", targets: ["facekit"]),
        .library(name: "FaceCore", targets: ["FaceCore"]),
        .library(name: "FaceTracking", targets: ["FaceTracking"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Recording", targets: ["Recording"]),
        .library(name: "Export", targets: ["Export"]),
        .library(name: "Depth", targets: ["Depth"]),
        // The parsers of outside data behind one fuzz entry point (scripts/fuzz builds it with
        // libFuzzer; an ordinary build replays inputs and writes seeds).
        .executable(name: "facekit-fuzz", targets: ["FacekitFuzz"]),
        // Depth drivers run in this helper process, never inside facekit (see DepthHost/main.c).
        .executable(name: "facekit-depth-host", targets: ["DepthHost"]),
        // The depth drivers built here: shared objects loaded by facekit-depth-host with dlopen.
        .library(name: "facekit-depth-replay", type: .dynamic, targets: ["DepthDriverReplay"]),
        .library(name: "facekit-depth-v4l2", type: .dynamic, targets: ["DepthDriverV4L2"]),
    ],
    targets: [
        // Pure Swift, no Foundation, Embedded-Swift clean (see DESIGN.md).
        // FaceCore's integer kernels (FaceKernels) and the values they take (FaceKernelTypes) are
        // modules of their own so that x86_64 builds can carry a second copy of the kernels,
        // FaceKernelsAVX2 (the same files, linked), chosen at run time (FaceCore/KernelISA.swift).
        .target(name: "FaceKernelTypes", swiftSettings: coreSettings),
        .target(name: "FaceKernels", dependencies: ["FaceKernelTypes", "CCPUFeatures"], swiftSettings: coreSettings),
        // CPUID for that choice (Swift has no way to ask).
        .target(name: "CCPUFeatures"),
        // The readers of outside data (TFLite, zip, .npy, the model file) and the graph they
        // produce: plain -O in every build, so a bounds or overflow check they need traps
        // instead of corrupting memory; only the engines and kernels are -Ounchecked.
        .target(name: "FaceModelFormats", dependencies: ["FaceKernelTypes"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "FaceCore", dependencies: ["FaceKernelTypes", "FaceModelFormats", "FaceKernels", "CCPUFeatures"] + kernelCopies,
                swiftSettings: coreSettings),
        // Optimized in debug too, like FaceCore: the accuracy tests run every test frame through it.
        // The seed's names (blend shapes, AUs, emotions, metadata columns) and its AU table: one
        // copy shared by the tracker and the session store.
        .target(name: "FaceNames"),
        .target(name: "FaceTracking", dependencies: ["FaceCore", "FaceKernels", "FaceNames", "LinuxSystem"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),

        // C shims: one per system library.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CHDF5", pkgConfig: "hdf5", providers: [.apt(["libhdf5-dev"])]),
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The depth driver ABI (include/facekit_depth.h) and the host's pipe protocol.
        .target(name: "CDepthDriver"),
        // C only, linked by swiftc: -nostartfiles leaves out swiftrt.o, whose image registration
        // is their only reference to the Swift runtime, so the packaged depth host and drivers
        // need none (scripts/package-deb drops the runtime's NEEDED entry swiftc still writes).
        .executableTarget(name: "DepthHost", dependencies: ["CDepthDriver"], publicHeadersPath: ".", linkerSettings: cOnlyLink),
        .target(name: "DepthDriverReplay", dependencies: ["CDepthDriver"], publicHeadersPath: ".", linkerSettings: [.linkedLibrary("m"), .linkedLibrary("z")] + cOnlyLink),
        .target(name: "DepthDriverV4L2", dependencies: ["CDepthDriver"], publicHeadersPath: ".", linkerSettings: [.linkedLibrary("m")] + cOnlyLink),

        // The platform layer: every syscall wrapped once, typed Errno, the EINTR retry rule, the
        // monotonic clock, atomic files, descriptor ownership, fault hooks for tests.
        .target(name: "LinuxSystem"),
        .target(name: "Capture", dependencies: ["CV4L2", "CJPEG", "LinuxSystem"]),
        .target(name: "Recording", dependencies: ["CJPEG", "FaceNames", "CZlib", "LinuxSystem"]),
        .target(name: "Export", dependencies: ["Recording", "CHDF5", "CZlib", "CJPEG", "LinuxSystem"]),
        .target(name: "Depth", dependencies: ["CDepthDriver", "FaceTracking", "Recording", "LinuxSystem"]),
        // Kernel GPIO character device, uAPI v2 (ioctl numbers and structs through CGPIO).
        .target(name: "CGPIO"),
        // Lab Streaming Layer: liblsl is dlopened at run time (CLSL), so nothing links against it.
        .target(name: "CLSL"),
        .target(name: "LabStreaming", dependencies: ["CLSL", "Recording", "FaceNames", "FaceTracking", "LinuxSystem"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "GPIO", dependencies: ["CGPIO", "LinuxSystem"]),
        // The status display on HDMI: libdrm (KMS dumb buffers, page flips) or fbdev, no desktop stack.
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .target(name: "Display", dependencies: ["CDRM", "CZlib", "FaceTracking", "LinuxSystem"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "Appliance", dependencies: ["Recording", "Export", "Capture", "FaceTracking", "GPIO", "Depth", "LabStreaming", "Display", "LinuxSystem"]),
        // The measuring behind `facekit bench models|pipeline` (timing loops, the Python reference children), out of the CLI.
        .target(name: "Benchmarks", dependencies: ["FaceCore", "FaceTracking", "LinuxSystem", "CCPUFeatures"]),

        // argv from glibc's constructor call (Swift's own lookup can miss under qemu-user).
        .target(name: "CProcessArguments"),
        .executableTarget(name: "facekit",
                          dependencies: ["FaceCore", "FaceTracking", "Capture", "Recording", "Export", "Appliance", "Depth",
                                         "CProcessArguments", "LabStreaming", "Display", "LinuxSystem", "Benchmarks"]),

        .executableTarget(name: "FacekitFuzz", dependencies: ["FaceCore", "Capture", "Recording", "Appliance", "Display"]),

        // Test-only: interposes malloc to prove hot paths allocate nothing.
        .target(name: "CAllocationCounter"),
        // Test-only: what several test targets share (temporary directories, the repository root,
        // synthetic sessions) and the kiosk's input and output twins.
        .target(name: "FacekitTestSupport", dependencies: ["Recording", "Appliance", "LinuxSystem"], path: "Tests/FacekitTestSupport"),
        .testTarget(name: "FaceCoreTests", dependencies: ["FaceCore", "FaceModelFormats", "FaceKernels", "CAllocationCounter"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "LinuxSystem"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "CAllocationCounter", "LinuxSystem", "FacekitTestSupport"]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "Recording", "LinuxSystem", "FacekitTestSupport"]),
        .testTarget(name: "GPIOTests", dependencies: ["GPIO", "LinuxSystem"]),
        // Every wrapper of the platform layer against a mocked kernel (swift-system's trace style).
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem"]),
        // Drivers/: C test drivers (good and misbehaving), compiled by the tests with cc.
        .testTarget(name: "DepthTests", dependencies: ["Depth", "Recording", "Export", "FaceTracking", "CDepthDriver", "CZlib", "Appliance", "Capture", "LinuxSystem", "FacekitTestSupport"], exclude: ["Drivers"]),
        .testTarget(name: "ApplianceTests", dependencies: ["Appliance", "CAllocationCounter", "LinuxSystem", "FacekitTestSupport"]),
        .testTarget(name: "LabStreamingTests", dependencies: ["LabStreaming", "Recording", "FaceTracking", "CAllocationCounter", "LinuxSystem"]),
        .testTarget(name: "DisplayTests", dependencies: ["Display", "FaceTracking", "CAllocationCounter", "LinuxSystem"]),
        .testTarget(name: "FaceTrackingTests", dependencies: ["FaceTracking", "FaceCore", "FaceKernels", "CAllocationCounter", "FacekitTestSupport"]),
        .testTarget(name: "BenchmarksTests", dependencies: ["Benchmarks", "FaceCore", "FaceTracking", "LinuxSystem", "FacekitTestSupport"]),
    ]
)

// Declared only for x86_64 targets: SwiftPM builds every declared target, and no other
// architecture knows the haswell or cascadelake CPU.
if targetArch == "x86_64" {
    package.targets.append(.target(name: "FaceKernelsAVX2", dependencies: ["FaceKernelTypes", "CCPUFeatures"],
                                   swiftSettings: [.unsafeFlags(["-Ounchecked"] + avx2Flags, .when(configuration: .release)),
                                                   .unsafeFlags(["-O"] + avx2Flags, .when(configuration: .debug))]))
    package.targets.append(.target(name: "FaceKernelsAVX512", dependencies: ["FaceKernelTypes", "CCPUFeatures"],
                                   swiftSettings: [.unsafeFlags(["-Ounchecked"] + avx512Flags, .when(configuration: .release)),
                                                   .unsafeFlags(["-O"] + avx512Flags, .when(configuration: .debug))]))
}
// Likewise only for aarch64 targets.
if targetArch == "aarch64" {
    package.targets.append(.target(name: "FaceKernelsDotProd", dependencies: ["FaceKernelTypes", "CCPUFeatures"],
                                   swiftSettings: [.unsafeFlags(["-Ounchecked"] + dotprodFlags, .when(configuration: .release)),
                                                   .unsafeFlags(["-O"] + dotprodFlags, .when(configuration: .debug))]))
}
