import Foundation
import GPIO

/// The kiosk's configuration: `/etc/facekit/facekit.json` (documented in rootfs-overlay/README.md).
/// Plain values; `KioskConfig.parse` builds and validates them, naming the key path of every problem.
public struct KioskConfig: Sendable, Equatable {
    public struct Camera: Sendable, Equatable {
        public var device = "/dev/video0"
        /// A V4L2 fourcc (YUYV, MJPG, NV12, GREY); nil lets capture pick a raw format first.
        public var format: String? = nil
        public var width = 640
        public var height = 480
        public var fps = 25.0
    }

    public struct Tracker: Sendable, Equatable {
        public var model = "/usr/share/facekit/facekit.fkm"
        public var minDetectionConfidence: Float = 0.5
        public var minPresenceConfidence: Float = 0.5
        public var smoothing = true
        public var blendShapes = true
        /// Faces tracked and recorded per frame; more than 1 records every face with a stable ID.
        public var maxFaces = 1
        /// Frames a face may be lost and still keep its ID (multi-face sessions).
        public var faceLossFrames = 15
    }

    public struct Recording: Sendable, Equatable {
        /// `none`, `all`, `all:float32`, or a list (see VertexMode).
        public var vertices = "none"
        /// Store a JPEG of every Nth frame (0 = off).
        public var imageEveryNth = 0
        public var jpegQuality = 85
        /// fsync cadence of the session logs: a power cut loses what was written since the last
        /// fsync, so half a second keeps the loss under a second even when an fsync is slow.
        public var flushIntervalMs = 500
    }

    public struct Export: Sendable, Equatable {
        /// csv, jsonl or hdf5.
        public var format = "hdf5"
        public var images = false
        /// Where sticks are mounted (created if missing).
        public var mountPoint = "/run/facekit/usb"
    }

    public struct Participants: Sendable, Equatable {
        public var prefix = "P"
        /// Zero-padded width of the counter.
        public var digits = 3
    }

    /// A GPIO chip: by path (`/dev/gpiochip0`) or by label (`pinctrl-bcm2711`, `gpio-sim.0-node0`).
    public enum ChipRef: Sendable, Equatable, CustomStringConvertible {
        case path(String), label(String)
        public var description: String {
            switch self { case .path(let p): return p; case .label(let l): return "label \(l)" }
        }
    }

    /// A line on a chip: by its name (`GPIO17`, `BTN_START`) or its offset.
    public enum LineRef: Sendable, Equatable, CustomStringConvertible {
        case name(String), offset(Int)
        public var description: String {
            switch self { case .name(let n): return n; case .offset(let o): return "offset \(o)" }
        }
    }

    public enum Bias: String, Sendable, Equatable, CaseIterable {
        case asIs = "as-is", disabled, pullUp = "pull-up", pullDown = "pull-down"
    }

    public struct Input: Sendable, Equatable {
        public var chip: ChipRef
        public var line: LineRef
        public var action: KioskAction
        public var bias: Bias = .asIs
        public var activeLow = false
        /// Kernel debounce period; 0 = none (TTL lines from a stimulus computer are clean).
        public var debounceMs = 0
        /// For TTL markers: pulses shorter than this are glitches and are ignored (0 = any edge).
        public var minPulseUs = 0
    }

    public struct Output: Sendable, Equatable {
        public var chip: ChipRef
        public var line: LineRef
        public var role: LEDRole
        /// How the LED shows its role when lit: on, heartbeat, blink:<Hz> (the GPIO module's patterns).
        public var pattern: GPIOLEDPattern = .on
        public var activeLow = false
    }

    public struct SyncPulse: Sendable, Equatable {
        public var chip: ChipRef
        public var line: LineRef
        public var widthUs = 10_000
        /// A pulse every N recorded frames (0 = only at session start).
        public var everyNFrames = 0
        public var activeLow = false
    }

    public var camera = Camera()
    public var tracker = Tracker()
    public var recording = Recording()
    /// Sessions live in `<dataDirectory>/sessions`; the participant counter beside them.
    public var dataDirectory = "/var/lib/facekit"
    public var export = Export()
    public var participants = Participants()
    public var inputs: [Input] = []
    public var outputs: [Output] = []
    public var syncPulse: SyncPulse? = nil
    public var lsl = LSL()
    public var jsonStream: JSONStream? = nil
    public var display = Display()
    public var depth: Depth? = nil

    public init() {}

    public var sessionsDirectory: String { dataDirectory + "/sessions" }
    public var counterPath: String { dataDirectory + "/participant-counter" }

    public static let defaultPath = "/etc/facekit/facekit.json"
}

/// What a GPIO input does.
public enum KioskAction: Sendable, Equatable, CustomStringConvertible {
    case sessionStart, sessionStop, sessionToggle, sessionPauseToggle
    case marker(String)
    case exportUSB

    /// Parses `session.start`, `session.stop`, `session.toggle`, `session.pause-toggle`,
    /// `marker:<label>`, `export.usb`.
    public init?(_ text: String) {
        switch text {
        case "session.start": self = .sessionStart
        case "session.stop": self = .sessionStop
        case "session.toggle": self = .sessionToggle
        case "session.pause-toggle": self = .sessionPauseToggle
        case "export.usb": self = .exportUSB
        default:
            guard text.hasPrefix("marker:") else { return nil }
            let label = String(text.dropFirst(7))
            guard KioskAction.isValidLabel(label) else { return nil }
            self = .marker(label)
        }
    }

    /// Marker labels end up in events.json and HDF5 attributes: short, printable, no quotes.
    static func isValidLabel(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.:".contains($0)) }
    }

    public var description: String {
        switch self {
        case .sessionStart: return "session.start"
        case .sessionStop: return "session.stop"
        case .sessionToggle: return "session.toggle"
        case .sessionPauseToggle: return "session.pause-toggle"
        case .marker(let l): return "marker:" + l
        case .exportUSB: return "export.usb"
        }
    }
}

/// The meaning of a status LED.
public enum LEDRole: String, Sendable, Equatable, Hashable, CaseIterable {
    case ready, recording, paused, exporting
    case safeToRemove = "safe-to-remove"
    case error
}
