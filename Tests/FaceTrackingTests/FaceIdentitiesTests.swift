import Foundation
import Testing
@testable import FaceTracking

/// The multi-face ID matcher: IDs stay with a face while it moves, survive a short loss, are new
/// after a long one, and are never handed out twice.
@Suite struct FaceIdentitiesTests {
    typealias Box = FaceIdentities.Box

    static func box(_ cx: Float, _ cy: Float, size: Float = 100) -> Box {
        Box(x0: cx - size / 2, y0: cy - size / 2, x1: cx + size / 2, y1: cy + size / 2)
    }

    static func ids(_ m: FaceIdentities) -> [Int32] { (0..<m.faceCount).map { m.id(ofFace: $0) } }

    @Test func twoMovingFacesKeepTheirIDsWhateverOrderTheTrackerReportsThem() {
        let m = FaceIdentities(capacity: 4)
        m.assign(boxes: [Self.box(100, 200), Self.box(500, 200)], count: 2)
        #expect(Self.ids(m) == [0, 1])
        // 60 frames: both move 8 px a frame towards each other's side, reported in either order.
        for t in 1...60 {
            let a = Self.box(100 + Float(t) * 5, 200), b = Self.box(500 - Float(t) * 5, 210)
            if t % 2 == 0 {
                m.assign(boxes: [a, b], count: 2)
                #expect(Self.ids(m) == [0, 1], "frame \(t)")
            } else {
                m.assign(boxes: [b, a], count: 2)
                #expect(Self.ids(m) == [1, 0], "frame \(t)")
            }
        }
        #expect(m.nextID == 2)
    }

    @Test func aFaceLostForUpToTheLimitGetsItsIDBackAndLaterANewOne() {
        let m = FaceIdentities(capacity: 2, maxLostFrames: 15)
        m.assign(boxes: [Self.box(100, 100), Self.box(400, 100)], count: 2)
        // The second face is missing for 15 frames, then back near where it was.
        for _ in 0..<15 { m.assign(boxes: [Self.box(100, 100)], count: 1); #expect(Self.ids(m) == [0]) }
        m.assign(boxes: [Self.box(100, 100), Self.box(430, 110)], count: 2)
        #expect(Self.ids(m) == [0, 1])
        // Now missing for 16 frames: it is forgotten, and comes back as a new face.
        for _ in 0..<16 { m.assign(boxes: [Self.box(100, 100)], count: 1) }
        m.assign(boxes: [Self.box(100, 100), Self.box(400, 100)], count: 2)
        #expect(Self.ids(m) == [0, 2])
    }

    @Test func framesWithoutFacesAgeEveryFaceAndIDsAreNeverReused() {
        let m = FaceIdentities(capacity: 1, maxLostFrames: 3)
        var seen: Set<Int32> = []
        for round in 0..<5 {
            m.assign(boxes: [Self.box(200, 200)], count: 1)
            let id = m.id(ofFace: 0)
            #expect(id == Int32(round))
            #expect(seen.insert(id).inserted)
            for _ in 0..<4 { m.assign(boxes: [], count: 0); #expect(m.faceCount == 0) }
        }
    }

    @Test func aFaceFarFromEveryRememberedFaceIsNew() {
        let m = FaceIdentities(capacity: 2)
        m.assign(boxes: [Self.box(100, 100)], count: 1)
        // The first face vanished and another appeared across the image in the same frame.
        m.assign(boxes: [Self.box(600, 400)], count: 1)
        #expect(Self.ids(m) == [1])
        // A face that moved a little more than its size (no overlap left) is the same face.
        m.assign(boxes: [Self.box(600 + 110, 400)], count: 1)
        #expect(Self.ids(m) == [1])
    }

    @Test func resetForgetsFacesAndRestartsIDsOnlyWhenAsked() {
        let m = FaceIdentities(capacity: 2)
        m.assign(boxes: [Self.box(100, 100)], count: 1)
        m.reset()
        m.assign(boxes: [Self.box(100, 100)], count: 1)
        #expect(Self.ids(m) == [1])
        m.reset(restartingIDs: true)
        m.assign(boxes: [Self.box(100, 100)], count: 1)
        #expect(Self.ids(m) == [0])
    }

    @Test func idsComeFromTheLandmarksOfATrackerFrame() {
        var frame = FaceFrame(capacity: 2)
        frame.imageWidth = 640; frame.imageHeight = 480
        func place(_ f: Int, _ cx: Float, _ cy: Float) {
            for i in 0..<FaceTracker.landmarkCount {
                let a = Float(i) * 0.7
                frame.faces[f].landmarks[i * 3] = cx + 0.05 * cos(a)
                frame.faces[f].landmarks[i * 3 + 1] = cy + 0.07 * sin(a)
                frame.faces[f].landmarks[i * 3 + 2] = 0
            }
        }
        let m = FaceIdentities(capacity: 2)
        place(0, 0.25, 0.5); place(1, 0.75, 0.5); frame.faceCount = 2
        m.assign(frame)
        #expect(Self.ids(m) == [0, 1])
        place(0, 0.76, 0.52); place(1, 0.26, 0.49)
        m.assign(frame)
        #expect(Self.ids(m) == [1, 0])
    }
}
