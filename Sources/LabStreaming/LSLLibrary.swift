import CLSL

/// liblsl, loaded at run time so that facekit runs (without LSL) where it is not installed.
package enum LSLLibrary {
    /// What to install, for the message when loading fails: Debian has no liblsl package.
    package static let installHint = """
        install liblsl 1.16 or newer: on a Raspberry Pi (arm64) the liblsl project's own .deb from its \
        GitHub releases (sccn/liblsl) or a source build (cmake), into /usr/lib or /usr/local/lib; \
        on x86_64 the pylsl wheel's pylsl/lib/liblsl.so also works. Name a file elsewhere with \
        lsl.library in the kiosk config or --lsl-library
        """

    /// Loads the library (once per process): `path` if given, else liblsl.so.2 through the
    /// dynamic loader's search path. Returns liblsl's version and build string.
    @discardableResult
    package static func load(path: String? = nil) throws(LSLError) -> String {
        var error = [CChar](repeating: 0, count: 512)
        let rc = error.withUnsafeMutableBufferPointer { clsl_load(path, $0.baseAddress, $0.count) }
        guard rc == 0 else {
            let why = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw LSLError(.libraryMissing, "Lab Streaming Layer is off: cannot load \(path ?? "liblsl.so.2") (\(why)); \(installHint)")
        }
        return version
    }

    package static var isLoaded: Bool { clsl_loaded() != 0 }

    /// "1.18 (git:…/build:Release/…)": lsl_library_version is major*100+minor.
    package static var version: String {
        let v = clsl_library_version()
        return "\(v / 100).\(v % 100) (\(String(cString: clsl_library_info())))"
    }

    /// lsl_local_clock() in seconds: the time base of every LSL timestamp on this host.
    package static func localClock() -> Double { clsl_local_clock() }

    /// A CLOCK_MONOTONIC time in ns as an LSL timestamp in seconds (the clocks are the same on
    /// Linux; LabStreamingTests checks it against the loaded library).
    @inline(__always)
    package static func timestamp(monotonicNs: Int64) -> Double {
        Double(monotonicNs / 1_000_000_000) + Double(monotonicNs % 1_000_000_000) / 1e9
    }

    /// An LSL timestamp in seconds as CLOCK_MONOTONIC ns.
    @inline(__always)
    package static func monotonicNs(timestamp: Double) -> Int64 {
        let whole = timestamp.rounded(.down)
        return Int64(whole) * 1_000_000_000 + Int64(((timestamp - whole) * 1e9).rounded())
    }
}
