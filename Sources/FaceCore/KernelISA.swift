#if canImport(FaceKernelsAVX2) || canImport(FaceKernelsAVX512) || canImport(FaceKernelsDotProd)
internal import CCPUFeatures
#endif

/// Which compiled copy of the integer kernels an engine runs.
///
/// The portable build is compiled for the baseline of its architecture (x86-64: SSE2), which
/// has half the vector width of the CPUs it mostly meets, so its 1×1 convolutions run well
/// behind the AVX2 build's, and LiteRT, the reference it is measured against, picks XNNPACK's AVX2
/// kernels at run time. So on x86_64 hosts the same kernel sources are compiled twice
/// (FaceKernels, and FaceKernelsAVX2 with `-target-cpu haswell`, x86-64-v3 instructions, and the 4 × 16 tile forms of
/// FACEKIT_WIDE_VECTORS), and an engine takes the best copy the CPU it finds itself on can run
/// (CPUID, `facekit_cpu_x86_64_v3`). CPUs with AVX-512 and VNNI take a third copy,
/// FaceKernelsAVX512 (x86-64-v4: 32 registers of 16 int32 lanes, and VPDPWSSD, PMADDWD with its
/// accumulating add in one instruction), whose 1×1 convolution keeps 4 pixels × 32 channels in
/// registers (`facekit_cpu_x86_64_v4_vnni`). Every copy is bit-exact against the same reference kernels,
/// so the choice changes speed only (tested: `QuantizedKernelTests`, `EngineTests`).
///
/// aarch64 builds carry FaceKernelsDotProd, compiled for cores with the Armv8.2 dot product
/// (`-target-cpu cortex-a76`), whose convolution multiplies int16 operands as byte products with
/// `SDOT` (`TiledConvolution.conv2dDot`) and so packs its weights in a layout of its own
/// (`packedBytes`, `packConv`); the CPU's AT_HWCAP decides (`facekit_cpu_aarch64_dotprod`).
/// The other kernels gain nothing from the dot product and run the baseline copy.
/// Other set-up work (`TiledConvolution.prepare`, depthwise packing) is shared. An engine takes
/// the functions of its copy once, in a `KernelTable`.
public enum KernelISA: Equatable, Sendable, CaseIterable {
    /// The architecture's baseline: runs on every CPU the build targets.
    case baseline
    /// x86-64-v3: AVX2, FMA, BMI2 (Haswell and Zen 1 onwards).
    case avx2
    /// x86-64-v4 with AVX512-VNNI (Cascade Lake, Ice Lake, Zen 4 and later).
    case avx512
    /// aarch64 with FEAT_DotProd (Cortex-A76, A55 and later).
    case dotprod

    /// The copies this CPU can run, baseline first.
    public static var available: [KernelISA] {
        #if canImport(FaceKernelsAVX2) && canImport(FaceKernelsAVX512)
        if facekit_cpu_x86_64_v4_vnni() != 0 { return [.baseline, .avx2, .avx512] }
        #endif
        #if canImport(FaceKernelsAVX2)
        if facekit_cpu_x86_64_v3() != 0 { return [.baseline, .avx2] }
        #endif
        #if canImport(FaceKernelsDotProd)
        if facekit_cpu_aarch64_dotprod() != 0 { return [.baseline, .dotprod] }
        #endif
        return [.baseline]
    }

    /// The fastest copy this CPU can run.
    public static var best: KernelISA { available.last ?? .baseline }

    public var name: String {
        switch self {
        case .baseline: return "baseline"
        case .avx2: return "avx2"
        case .avx512: return "avx512"
        case .dotprod: return "dotprod"
        }
    }

    /// `name` back to the case (command-line options), or nil.
    public init?(name: String) {
        guard let isa = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = isa
    }

    /// This copy's kernels, chosen once (`KernelTable`).
    public var kernels: KernelTable { KernelTable(self) }
}
