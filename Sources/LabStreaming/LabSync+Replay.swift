import Foundation
import Recording

extension LabSync {
    /// Opens the streams for a replay of `media` into `recorder` (received markers become session
    /// events), then waits up to `waitSeconds` for the marker stream and for an inlet: LSL inlets
    /// get only what is pushed after they connect. Nil when LSL cannot start; what happened goes
    /// to `say` either way.
    package static func startReplay(_ options: Options, media: String, nominalRate: Double, waitSeconds: Double,
                                    recorder: SessionRecorder, say: (String) -> Void) -> LabSync? {
        var o = options
        o.camera = "file:" + (media as NSString).lastPathComponent
        o.nominalRate = nominalRate
        let lab: LabSync
        do {
            lab = try LabSync(o) { m in recorder.addEvent(m.label, source: LabSync.eventSource(m), monotonicNs: m.monotonicNs) }
        } catch {
            say("facekit: \(error.message)")
            return nil
        }
        say("facekit: LSL \(lab.version): streams '\(o.faceName)' (\(FaceChannels.count) channels) and '\(o.markersName)'")
        if let inlet = lab.inlet, !inlet.waitUntilConnected(seconds: waitSeconds) {
            say("facekit: LSL: no stream named '\(o.inlet?.name ?? "")' within \(waitSeconds) s; still looking while the media plays")
        }
        if !lab.face.waitForConsumers(seconds: waitSeconds) {
            say("facekit: LSL: no inlet connected within \(waitSeconds) s; replaying anyway")
        }
        return lab
    }
}
