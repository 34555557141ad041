import Foundation
import GPIO

/// The kiosk's configuration: `/etc/facekit/facekit.json` (documented in rootfs-overlay/README.md).
/// Plain values; `KioskConfig.parse` builds and validates them, naming the key path of every problem.
package struct KioskConfig: Sendable, Equatable {
    package struct Camera: Sendable, Equatable {
        package var device = "/dev/video0"
        /// A V4L2 fourcc (YUYV, MJPG, NV12, GREY); nil lets capture pick a raw format first.
        package var format: String? = nil
        package var width = 640
        package var height = 480
        package var fps = 25.0
    }

    package struct Tracker: Sendable, Equatable {
        package var model = "/usr/share/facekit/facekit.fkm"
        package var minDetectionConfidence: Float = 0.5
        package var minPresenceConfidence: Float = 0.5
        package var smoothing = true
        package var blendShapes = true
        /// Faces tracked and recorded per frame; more than 1 records every face with a stable ID.
        package var maxFaces = 1
        /// Frames a face may be lost and still keep its ID (multi-face sessions).
        package var faceLossFrames = 15
    }

    package struct Recording: Sendable, Equatable {
        /// `none`, `all`, `all:float32`, or a list (see VertexMode).
        package var vertices = "none"
        /// Store a JPEG of every Nth frame (0 = off).
        package var imageEveryNth = 0
        package var jpegQuality = 85
        /// fsync cadence of the session logs: a power cut loses what was written since the last
        /// fsync, so half a second keeps the loss under a second even when an fsync is slow.
        package var flushIntervalMs = 500
    }

    package struct Export: Sendable, Equatable {
        /// csv, jsonl or hdf5.
        package var format = "hdf5"
        package var images = false
        /// Where sticks are mounted (created if missing).
        package var mountPoint = "/run/facekit/usb"
    }

    package struct Participants: Sendable, Equatable {
        package var prefix = "P"
        /// Zero-padded width of the counter.
        package var digits = 3
    }

    /// A GPIO chip: by path (`/dev/gpiochip0`) or by label (`pinctrl-bcm2711`, `gpio-sim.0-node0`).
    package enum ChipRef: Sendable, Equatable, CustomStringConvertible {
        case path(String), label(String)
        package var description: String {
            switch self { case .path(let p): return p; case .label(let l): return "label \(l)" }
        }
    }

    /// A line on a chip: by its name (`GPIO17`, `BTN_START`) or its offset.
    package enum LineRef: Sendable, Equatable, CustomStringConvertible {
        case name(String), offset(Int)
        package var description: String {
            switch self { case .name(let n): return n; case .offset(let o): return "offset \(o)" }
        }
    }

    package enum Bias: String, Sendable, Equatable, CaseIterable {
        case asIs = "as-is", disabled, pullUp = "pull-up", pullDown = "pull-down"
    }

    package struct Input: Sendable, Equatable {
        package var chip: ChipRef
        package var line: LineRef
        package var action: KioskAction
        package var bias: Bias = .asIs
        package var activeLow = false
        /// Kernel debounce period; 0 = none (TTL lines from a stimulus computer are clean).
        package var debounceMs = 0
        /// For TTL markers: pulses shorter than this are glitches and are ignored (0 = any edge).
        package var minPulseUs = 0
    }

    package struct Output: Sendable, Equatable {
        package var chip: ChipRef
        package var line: LineRef
        package var role: LEDRole
        /// How the LED shows its role when lit: on, heartbeat, blink:<Hz> (the GPIO module's patterns).
        package var pattern: GPIOLEDPattern = .on
        package var activeLow = false
    }

    package struct SyncPulse: Sendable, Equatable {
        package var chip: ChipRef
        package var line: LineRef
        package var widthUs = 10_000
        /// A pulse every N recorded frames (0 = only at session start).
        package var everyNFrames = 0
        package var activeLow = false
    }

    package var camera = Camera()
    package var tracker = Tracker()
    package var recording = Recording()
    /// Sessions live in `<dataDirectory>/sessions`; the participant counter beside them.
    package var dataDirectory = "/var/lib/facekit"
    package var export = Export()
    package var participants = Participants()
    package var inputs: [Input] = []
    package var outputs: [Output] = []
    package var syncPulse: SyncPulse? = nil
    package var lsl = LSL()
    package var jsonStream: JSONStream? = nil
    package var display = Display()
    package var depth: Depth? = nil

    package init() {}

    package var sessionsDirectory: String { dataDirectory + "/sessions" }
    package var counterPath: String { dataDirectory + "/participant-counter" }

    package static let defaultPath = "/etc/facekit/facekit.json"
}

/// What a GPIO input does.
package enum KioskAction: Sendable, Equatable, CustomStringConvertible {
    case sessionStart, sessionStop, sessionToggle, sessionPauseToggle
    case marker(String)
    case exportUSB

    /// Parses `session.start`, `session.stop`, `session.toggle`, `session.pause-toggle`,
    /// `marker:<label>`, `export.usb`.
    package init?(_ text: String) {
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

    package var description: String {
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
package enum LEDRole: String, Sendable, Equatable, Hashable, CaseIterable {
    case ready, recording, paused, exporting
    case safeToRemove = "safe-to-remove"
    case error
}
