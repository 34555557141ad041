import Appliance
import Capture
import FaceCore
import Foundation
import Recording

/// One parser of outside data, as facekit meets it: the bytes of a file, a datagram or a
/// boot sector go in through the same entry point the product uses, end to end. Errors are
/// the expected outcome for most inputs; only a crash (a trap, an ASan report, a hang) is a bug.
enum FuzzTarget: String, CaseIterable {
    case tflite, modelfile = "model-file", npy, zip
    case y4m, mjpeg, stillJPEG = "still-jpeg", stillPNM = "still-pnm"
    case sessionJSON = "session-json", framesLog = "frames-log", eventsLog = "events-log", depthLog = "depth-log"
    case config, uevent, fatProbe = "fat-probe"
    case psfFont = "psf-font"

    /// What the target reads, for `facekit-fuzz list` and scripts/fuzz.
    var summary: String {
        switch self {
        case .tflite: return "TFLite flatbuffer: TFLiteModel + GraphImporter + GraphValidator + MemoryPlan"
        case .modelfile: return "facekit model file (.fkm), checksum resealed: ModelFile + GraphValidator + engine set-up"
        case .npy: return ".npy array: NPYArray"
        case .zip: return "zip bundle (.task): ZipArchive, every member read with its CRC-32 checked"
        case .y4m: return "YUV4MPEG2 stream: Y4MSource header and frames"
        case .mjpeg: return "concatenated JPEG frames: MJPEGFileSource (JPEGFrameScanner, libjpeg-turbo)"
        case .stillJPEG: return "JPEG still: StillImageSource (JPEGDecoder with damaged-file warnings)"
        case .stillPNM: return "PNG/other still as ffmpeg returns it (PNM): StillImageSource.image(fromPNM:)"
        case .sessionJSON: return "session.json of a stored session: SessionStore.open, list, verify"
        case .framesLog: return "frames.log of a stored session: salvage, verify, every record read"
        case .eventsLog: return "events.log of a stored session: EventLog.scan through verify"
        case .depthLog: return "depth.log of a stored session: DepthLog.scan, every map read"
        case .config: return "kiosk config (/etc/facekit/facekit.json): KioskConfig.parse"
        case .uevent: return "NETLINK_KOBJECT_UEVENT datagram: Uevent(datagram:) and the USB stick filter"
        case .fatProbe: return "a stick partition's first sectors: FilesystemProbe.identify"
        case .psfFont: return "the display's console font (PSF1/PSF2, gzip): BitmapFont, every glyph drawn"
        }
    }

    /// Feeds one input to the parser.
    func run(_ data: UnsafeRawBufferPointer) {
        switch self {
        case .tflite: FuzzHarness.exercise(Array(data), target: .tflite)
        case .modelfile:
            // Most mutations only break the checksum; resealing lets them reach the section
            // reader and the graph validator behind it (FuzzTests cover the checksum itself).
            var b = Array(data)
            if b.count >= ModelFile.headerSize { FuzzHarness.reseal(&b) }
            FuzzHarness.exercise(b, target: .modelFile)
        case .npy: FuzzHarness.exercise(Array(data), target: .npy)
        case .zip: FuzzHarness.exercise(Array(data), target: .zip)
        case .y4m: MediaFuzzing.y4m(data)
        case .mjpeg: MediaFuzzing.mjpeg(data)
        case .stillJPEG: MediaFuzzing.stillJPEG(data)
        case .stillPNM: _ = try? StillImageSource.image(fromPNM: Data(data), format: .rgb24, name: "fuzz.png")
        case .sessionJSON: SessionFuzzing.shared.run(data, replacing: SessionMetadata.fileName)
        case .framesLog: SessionFuzzing.shared.run(data, replacing: FrameLog.fileName)
        case .eventsLog: SessionFuzzing.shared.run(data, replacing: EventLog.fileName)
        case .depthLog: SessionFuzzing.shared.run(data, replacing: DepthLog.fileName)
        case .config: _ = try? KioskConfig.parse(Data(data))
        case .uevent: _ = Uevent(datagram: data)?.usbBlockDevice
        case .fatProbe: _ = FilesystemProbe.identify(Array(data))
        case .psfFont: DisplayFuzzing.font(data)
        }
    }
}
