/// The framing check the researcher reads before a session starts: is the participant seated so
/// the tracker works well? Each measure is green (good), amber (usable, worth correcting) or red
/// (tracking will suffer). The thresholds are public and documented in rootfs-overlay/README.md.
package struct FramingCheck: Sendable, Equatable {
    package enum Level: Int, Sendable, Comparable {
        case green, amber, red
        package static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// A band: green inside `green`, amber inside `amber` (which contains `green`), red outside.
    package struct Band: Sendable, Equatable {
        package var green: ClosedRange<Float>
        package var amber: ClosedRange<Float>
        package func level(_ v: Float) -> Level {
            guard v.isFinite else { return .red }
            return green.contains(v) ? .green : amber.contains(v) ? .amber : .red
        }
    }

    /// Eyes to camera, centimetres (the iris-size estimate): MediaPipe's landmark model is trained
    /// on faces at arm's length; far away the iris is a few pixels and the estimate noisy.
    package var distanceCm = Band(green: 40 ... 80, amber: 30 ... 110)
    /// Face height (landmark box) as a share of the frame height: small faces lose detail, a face
    /// filling the frame is cut off when the participant moves.
    package var faceHeight = Band(green: 0.25 ... 0.6, amber: 0.15 ... 0.8)
    /// Ambient intensity on ARKit's scale (1000 ≈ well lit): dark frames are noisy, blown-out
    /// frames lose the features the blend shapes read.
    package var light = Band(green: 600 ... 1600, amber: 300 ... 2200)
    /// The larger of |yaw| and |pitch|, degrees: the blend shapes degrade as the face turns away.
    package var headAngleDeg = Band(green: 0 ... 15, amber: 0 ... 25)

    package init() {}

    /// The five rows of the check for one frame.
    package struct Result: Sendable, Equatable {
        package var face: Level
        package var distance: Level
        package var size: Level
        package var light: Level
        package var angle: Level
        package var overall: Level { max(face, distance, size, light, angle) }
    }

    package func evaluate(_ f: DisplayFrame) -> Result {
        guard f.hasFrame else { return Result(face: .red, distance: .red, size: .red, light: .red, angle: .red) }
        let lightLevel = light.level(f.lightIntensity)
        guard f.faceFound else { return Result(face: .red, distance: .red, size: .red, light: lightLevel, angle: .red) }
        let angle = max(abs(f.yaw), abs(f.pitch)) * 180 / .pi
        return Result(face: .green, distance: distanceCm.level(f.distance * 100), size: faceHeight.level(f.boxMaxY - f.boxMinY),
                      light: lightLevel, angle: headAngleDeg.level(angle))
    }
}
