import Foundation
import LinuxSystem
import Testing
@testable import LabStreaming

/// These need a real liblsl: FACEKIT_LSL_LIBRARY names it (scripts/tests/32-lsl.sh passes the
/// pinned pylsl wheel's copy). The missing-library test always runs.
private let libraryPath = ProcessInfo.processInfo.environment["FACEKIT_LSL_LIBRARY"]

@Suite(.serialized) struct LSLLibraryTests {
    @Test func missingLibrarySaysWhatToInstall() {
        guard !LSLLibrary.isLoaded else { return }
        do {
            try LSLLibrary.load(path: "liblsl-does-not-exist.so.2")
            Issue.record("a missing library loaded")
        } catch {
            #expect(error.kind == .libraryMissing)
            #expect(error.message.contains("liblsl-does-not-exist.so.2"))
            #expect(error.message.contains("install liblsl") && error.message.contains("GitHub releases"))
        }
    }

    /// LSL timestamps are lsl_local_clock() seconds; facekit stamps frames and edges with
    /// CLOCK_MONOTONIC. Proven here, against the library, rather than assumed: every LSL reading
    /// must fall between two monotonic readings taken around it.
    @Test(.enabled(if: libraryPath != nil, "FACEKIT_LSL_LIBRARY is not set"))
    func localClockIsClockMonotonic() throws {
        let version = try LSLLibrary.load(path: libraryPath)
        #expect(!version.isEmpty)
        var worstNs: Int64 = 0
        for _ in 0..<1000 {
            let before = Int64(MonotonicClock.now())
            let lsl = LSLLibrary.monotonicNs(timestamp: LSLLibrary.localClock())
            let after = Int64(MonotonicClock.now())
            // A double of ~1e5..1e7 s keeps sub-microsecond resolution; allow 1 µs of rounding.
            #expect(lsl >= before - 1_000 && lsl <= after + 1_000, "lsl \(lsl) outside [\(before), \(after)]")
            worstNs = max(worstNs, max(before - lsl, lsl - after, 0))
        }
        #expect(worstNs <= 1_000)
    }

    @Test func timestampConversionRoundTrips() {
        for ns: Int64 in [0, 1, 999_999_999, 1_000_000_000, 123_456_789_012_345, 9_876_543_210_987_654] {
            let back = LSLLibrary.monotonicNs(timestamp: LSLLibrary.timestamp(monotonicNs: ns))
            // Doubles near 1e7 s resolve ~2 ns.
            #expect(abs(back - ns) <= 2, "\(ns) -> \(back)")
        }
    }

    @Test func markerSelectorPredicate() throws {
        #expect(try MarkerInlet.Selector(name: "Stim", type: "Markers").predicate() == "name='Stim' and type='Markers'")
        #expect(try MarkerInlet.Selector(sourceID: "pc-1").predicate() == "source_id='pc-1'")
        #expect(throws: LSLError.self) { try MarkerInlet.Selector().predicate() }
        #expect(throws: LSLError.self) { try MarkerInlet.Selector(name: "it's").predicate() }
    }

    @Test func faceChannelTable() {
        #expect(FaceChannels.channels.count == FaceChannels.count)
        #expect(FaceChannels.count == 74)
        #expect(FaceChannels.channels.first?.label == "browDownLeft")
        #expect(FaceChannels.channels[52].label == "au1")
        #expect(FaceChannels.channels.last == .init(label: "faceTracked", unit: "bool", type: "Status"))
        #expect(Set(FaceChannels.channels.map(\.label)).count == 74)
    }
}
