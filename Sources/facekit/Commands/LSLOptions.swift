import Foundation
import LabStreaming
import Recording

/// The Lab Streaming Layer options of `process`:
///
///     --lsl                       publish the face and markers streams while replaying
///     --lsl-wait SECONDS          wait this long for an inlet before the first frame (default 10):
///                                 LSL inlets get only what is pushed after they connect
///     --lsl-library FILE          liblsl's file (default: liblsl.so.2 from the loader's path)
///     --lsl-name NAME             the face stream's name (default facekit)
///     --lsl-markers-from NAME     record the markers of the LSL stream NAME as session events
///
/// Without liblsl the command says what to install and carries on without LSL.
struct LSLOptions {
    static let valueOptions: Set<String> = ["lsl-wait", "lsl-library", "lsl-name", "lsl-markers-from"]
    static let flagOptions: Set<String> = ["lsl"]
    static let synopsis = "[--lsl [--lsl-wait S] [--lsl-library FILE] [--lsl-name NAME] [--lsl-markers-from NAME]]"

    let enabled: Bool
    let waitSeconds: Double
    var options = LabSync.Options()

    init(_ args: ArgumentScanner) throws {
        enabled = args.flag("lsl")
        if !enabled {
            for o in Self.valueOptions.sorted() where args.value(o) != nil { throw UsageError("--\(o) needs --lsl") }
        }
        let w = args.value("lsl-wait") ?? "10"
        guard let s = Double(w), s >= 0, s <= 3600 else { throw UsageError("--lsl-wait expects seconds (0...3600), got '\(w)'") }
        waitSeconds = s
        options.library = args.value("lsl-library")
        if let n = args.value("lsl-name") { options.faceName = n; options.markersName = n + "-markers" }
        if let m = args.value("lsl-markers-from") {
            do { _ = try MarkerInlet.Selector(name: m).predicate() } catch { throw UsageError("--lsl-markers-from: \(error.message)") }
            options.inlet = .init(name: m)
        }
    }

    /// The streams for a replay of `media` into `recorder` (`LabSync.startReplay`), or nil when
    /// LSL is off or cannot start (the reason on stderr).
    func start(media: String, nominalRate: Double, recorder: SessionRecorder) -> LabSync? {
        guard enabled else { return nil }
        return LabSync.startReplay(options, media: media, nominalRate: nominalRate, waitSeconds: waitSeconds,
                                   recorder: recorder, say: printError)
    }
}
