/// The seed's 14 FACS action units from blend shapes (EMFACS Table 1, Aldenhoven et al.):
/// one blend shape, or the mean of a left/right pair. Kept here, beside the names, so the tracker
/// and the synthetic recordings compute them identically.
public enum ActionUnits {
    /// For each AU in `FaceSchema.actionUnitNames` order: the blend shape names averaged.
    public static let sources: [[String]] = [
        ["browInnerUp"],                           // au1  inner brow raise
        ["browOuterUpLeft", "browOuterUpRight"],   // au2  outer brow raise
        ["browDownLeft", "browDownRight"],         // au4  brow lowerer
        ["eyeWideLeft", "eyeWideRight"],           // au5  upper lid raise
        ["cheekSquintLeft", "cheekSquintRight"],   // au6  cheek raise
        ["eyeSquintLeft", "eyeSquintRight"],       // au7  lid tightener
        ["noseSneerLeft", "noseSneerRight"],       // au9  nose wrinkler
        ["mouthSmileLeft", "mouthSmileRight"],     // au12 lip corner puller
        ["mouthDimpleLeft", "mouthDimpleRight"],   // au14 dimpler
        ["mouthFrownLeft", "mouthFrownRight"],     // au15 lip corner depressor
        ["mouthLowerDownLeft", "mouthLowerDownRight"], // au16 lower lip depressor
        ["mouthStretchLeft", "mouthStretchRight"], // au20 lip stretcher
        ["mouthPucker"],                           // au23 lip tightener
        ["jawOpen"],                               // au26 jaw drop
    ]

    /// Blend shape indices per AU, resolved once.
    public static let sourceIndices: [[Int]] = sources.map { names in
        names.map { FaceSchema.blendShapeNames.firstIndex(of: $0)! }
    }

    /// Fills `out` (14 values) from `blendShapes` (52 values). Allocates nothing.
    public static func compute(blendShapes: [Float], into out: inout [Float]) {
        for (a, ix) in sourceIndices.enumerated() {
            out[a] = ix.count == 1 ? blendShapes[ix[0]] : (blendShapes[ix[0]] + blendShapes[ix[1]]) * 0.5
        }
    }
}
