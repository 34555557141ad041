import Recording

/// facekit's action units under OpenFace's and py-feat's names and scales.
///
/// facekit derives the seed's 14 AUs from blend shapes (`ActionUnits.sources`: one blend shape or
/// the mean of a left/right pair, in [0, 1]). The OpenFace and py-feat files carry the ones those
/// tools also name (13: AU16, lower lip depressor, is in neither); the AUs the tools name that
/// facekit does not derive are left out, never written as zeros.
///
/// - OpenFace `AUxx_r` (intensity 0–5): 5 × the facekit value, clamped to [0, 5].
/// - OpenFace `AUxx_c` (presence 0/1): 1 when `AUxx_r` ≥ 1 (blend shapes at ≥ 0.2, FACS "A",
///   trace, and above), else 0; OpenFace's own classifiers are separate models with no
///   equivalent here.
/// - py-feat `AUxx` (0–1, as its AU models output): the facekit value.
///
/// Exports record `mappingVersion` in `session.json` (`auMappingVersion`): a change to the blend
/// shape table, the scale or the threshold gets a new version.
public enum ActionUnitExport {
    public static let mappingVersion = "facekit-au-1 (seed EMFACS blend-shape table, 14 AUs; OpenFace _r = 5x, _c = _r >= 1)"

    /// OpenFace 2.2's intensity and presence AUs (FeatureExtraction's CSV, in its order).
    static let openFaceIntensity = [1, 2, 4, 5, 6, 7, 9, 10, 12, 14, 15, 17, 20, 23, 25, 26, 45]
    static let openFacePresence = [1, 2, 4, 5, 6, 7, 9, 10, 12, 14, 15, 17, 20, 23, 25, 26, 28, 45]
    /// py-feat 2.1's Detectorv1 AUs (`AU_LANDMARK_MAP["Feat"]`).
    static let pyFeat = [1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 17, 20, 23, 24, 25, 26, 28, 43]

    /// AU number of each of facekit's AUs ("au12" → 12), in `FaceSchema.actionUnitNames` order.
    static let facekitNumbers: [Int] = FaceSchema.actionUnitNames.map { Int($0.dropFirst(2))! }

    /// (AU number, index in facekit's AUs) for the AUs of `names` facekit derives, in `names` order.
    static func derived(_ names: [Int]) -> [(number: Int, index: Int)] {
        names.compactMap { n in facekitNumbers.firstIndex(of: n).map { (n, $0) } }
    }

    /// "AU01", "AU12".
    static func name(_ n: Int) -> String { n < 10 ? "AU0\(n)" : "AU\(n)" }

    static let presenceThreshold = 1.0

    /// OpenFace intensity of a facekit AU value (NaN stays NaN).
    static func openFaceIntensity(_ v: Float) -> Double { v.isNaN ? .nan : min(max(Double(v) * 5, 0), 5) }
}
