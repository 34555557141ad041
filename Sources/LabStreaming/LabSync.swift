import Foundation
import LinuxSystem
import Recording

/// Everything facekit publishes to and takes from the Lab Streaming Layer for one run: the face
/// stream, the markers stream, and optionally a markers stream from the network whose markers
/// become session events.
package final class LabSync: @unchecked Sendable {
    package struct Options: Sendable, Equatable {
        /// liblsl's file; nil searches the dynamic loader's path for liblsl.so.2.
        package var library: String? = nil
        package var faceName = "facekit"
        package var faceType = "Face"
        package var markersName = "facekit-markers"
        /// The camera, for the stable source_id (hostname + camera).
        package var camera = "camera"
        /// Frames per second of the camera or media; 0 for unknown (irregular).
        package var nominalRate = 0.0
        /// A markers stream to record as session events, if any.
        package var inlet: MarkerInlet.Selector? = nil
        package init() {}
    }

    package let face: FaceOutlet
    package let markers: MarkerOutlet
    package private(set) var inlet: MarkerInlet?
    package let version: String

    /// "host/camera": stable across restarts, different for each kiosk and camera.
    package static func sourceID(camera: String) -> String {
        "\(ProcessInfo.processInfo.hostName)/\(camera)"
    }

    /// Loads liblsl and opens the outlets (and the inlet, whose markers go to `onMarker` on its
    /// own thread). Throws `.libraryMissing` with what to install when liblsl is not there.
    package init(_ options: Options, onMarker: (@Sendable (MarkerInlet.Marker) -> Void)? = nil) throws(LSLError) {
        version = try LSLLibrary.load(path: options.library)
        let id = Self.sourceID(camera: options.camera)
        var f = FaceOutlet.Options(sourceID: id, nominalRate: options.nominalRate)
        f.name = options.faceName; f.type = options.faceType
        face = try FaceOutlet(f)
        markers = try MarkerOutlet(name: options.markersName, sourceID: id + "/markers")
        if let sel = options.inlet, let onMarker { inlet = try MarkerInlet(sel, handler: onMarker) }
    }

    /// Why LSL cannot reach anyone, when the only network interface is loopback: the kiosk's
    /// unit runs with PrivateNetwork=yes unless the LSL drop-in is installed. nil otherwise.
    package static func isolatedNetworkHint() -> String? {
        guard case .success(let names) = Syscalls.directoryEntries("/sys/class/net"), names.sorted() == ["lo"] else { return nil }
        return "only the loopback interface is visible, so no other machine can see the streams; if facekit runs "
            + "under facekit.service, run systemctl daemon-reload && systemctl restart facekit (facekit's systemd generator "
            + "then adds the LSL network drop-in; without the package, link /usr/share/facekit/systemd/facekit.service.d/lsl.conf "
            + "into /etc/systemd/system/facekit.service.d/)"
    }

    /// Session event for a received marker: the marker's text as the label; the source says it
    /// came over LSL and carries the clock mapping's uncertainty in microseconds.
    package static func eventSource(_ m: MarkerInlet.Marker) -> String {
        m.uncertaintyNs < 0 ? "lsl:u=unknown" : "lsl:u=\((m.uncertaintyNs + 500) / 1000)us"
    }

    /// Drains the face queue and stops the inlet. A consumer gets a moment to read the last
    /// samples: liblsl drops what is still in its send queue when an outlet is destroyed.
    package func close(lingerSeconds: Double = 0.5) {
        face.close()
        inlet?.stop()
        if face.hasConsumers || markers.waitForConsumers(seconds: 0) {
            MonotonicClock.sleep(nanoseconds: UInt64(lingerSeconds * 1e9))
        }
    }
}
