// swift-tools-version:6.0
// facekit — one package: library modules, thin C shims, and the `facekit` executable.
// Dependency arrows point one way:
//   FaceCore ← FaceTracking ← (facekit)
//   CV4L2, CJPEG ← Capture
//   CJPEG ← Recording ← Export → CHDF5
//   CGPIO ← GPIO ← Appliance → Recording, Export, Capture, FaceTracking
import PackageDescription

// A deployment may build FaceCore for its exact CPU: FACEKIT_CPU=cortex-a76 (dot product),
// FACEKIT_CPU=haswell (AVX2), … The default is the portable baseline of the architecture.
let cpuFlags: [String] = Context.environment["FACEKIT_CPU"].map { ["-target-cpu", $0] } ?? []

let package = Package(
    name: "facekit",
    products: [
        .executable(name: "facekit", targets: ["facekit"]),
        .library(name: "FaceCore", targets: ["FaceCore"]),
        .library(name: "FaceTracking", targets: ["FaceTracking"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Recording", targets: ["Recording"]),
        .library(name: "Export", targets: ["Export"]),
    ],
    targets: [
        // Pure Swift, no Foundation, Embedded-Swift clean (see DESIGN.md).
        .target(name: "FaceCore",
                // Optimized even in debug builds: the test suite runs real models through it.
                swiftSettings: [.unsafeFlags(["-Ounchecked"] + cpuFlags, .when(configuration: .release)),
                                .unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Optimized in debug too, like FaceCore: the accuracy tests run every test frame through it.
        // The seed's names (blend shapes, AUs, emotions, metadata columns) and its AU table: one
        // copy shared by the tracker and the session store.
        .target(name: "FaceNames"),
        .target(name: "FaceTracking", dependencies: ["FaceCore", "FaceNames"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),

        // C shims: one per system library.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CHDF5", pkgConfig: "hdf5", providers: [.apt(["libhdf5-dev"])]),
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),

        .target(name: "Capture", dependencies: ["CV4L2", "CJPEG"]),
        .target(name: "Recording", dependencies: ["CJPEG", "FaceNames"]),
        .target(name: "Export", dependencies: ["Recording", "CHDF5"]),
        // Kernel GPIO character device, uAPI v2 (ioctl numbers and structs through CGPIO).
        .target(name: "CGPIO"),
        .target(name: "GPIO", dependencies: ["CGPIO"]),
        .target(name: "Appliance", dependencies: ["Recording", "Export", "Capture", "FaceTracking", "GPIO"]),

        .executableTarget(name: "facekit",
                          dependencies: ["FaceCore", "FaceTracking", "Capture", "Recording", "Export", "Appliance"]),

        // Test-only: interposes malloc to prove hot paths allocate nothing.
        .target(name: "CAllocationCounter"),
        .testTarget(name: "FaceCoreTests", dependencies: ["FaceCore", "CAllocationCounter"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "CAllocationCounter"]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "Recording"]),
        .testTarget(name: "GPIOTests", dependencies: ["GPIO"]),
        .testTarget(name: "ApplianceTests", dependencies: ["Appliance"]),
        .testTarget(name: "FaceTrackingTests", dependencies: ["FaceTracking", "FaceCore", "CAllocationCounter"]),
    ]
)
