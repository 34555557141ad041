import Foundation
import Testing
@testable import Capture

/// The V4L2 path without a camera: argument handling and error reporting. Streaming from real
/// drivers (vivid, v4l2loopback) is tested on the emulated board (scripts/tests/40-emulated-board.sh).
@Suite struct V4L2Tests {
    @Test func missingDeviceIsReportedAsDisconnectedWithItsPath() {
        let cam = V4L2Camera(CameraConfiguration(path: "/dev/video-facekit-missing"))
        #expect { try cam.start() } throws: { e in
            let e = e as? CaptureError
            return e?.code == .disconnected && e?.message.contains("/dev/video-facekit-missing") == true
                && e?.message.contains("facekit devices") == true
        }
    }

    @Test func aNonV4L2FileIsNotACamera() {
        let cam = V4L2Camera(CameraConfiguration(path: "/dev/null"))
        #expect { try cam.start() } throws: { e in (e as? CaptureError)?.code == .notACamera }
    }

    @Test func readBeforeStartIsAUsageError() {
        let cam = V4L2Camera(CameraConfiguration(path: "/dev/null"))
        let b = FrameBuffer(layout: FrameLayout(pixelFormat: .yuyv, width: 8, height: 8))
        #expect { _ = try cam.read(into: b, timeoutMs: 1) } throws: { e in (e as? CaptureError)?.code == .usage }
    }

    @Test func frameIntervalsAreExactFractions() {
        #expect(V4L2Camera.interval(fps: 30) == .init(numerator: 1, denominator: 30))
        #expect(V4L2Camera.interval(fps: 29.97) == .init(numerator: 1001, denominator: 30000))
        #expect(V4L2Camera.interval(fps: 12.5) == .init(numerator: 1000, denominator: 12500))
        #expect(V4L2Device.Interval(numerator: 1, denominator: 25).nanoseconds == 40_000_000)
    }

    @Test func controlNamesAreNormalisedLikeV4L2Ctl() {
        #expect(V4L2Device.controlKey("White Balance, Automatic") == "white_balance_automatic")
        #expect(V4L2Device.controlKey("Gain") == "gain")
        #expect(V4L2Device.controlKey("Auto Exposure") == "auto_exposure")
        #expect(AutoOrManual("auto") == .auto && AutoOrManual("120") == .manual(120) && AutoOrManual("x") == nil)
    }

    @Test func fourCCAndPixelFormats() {
        #expect(FourCC("MJPG")!.rawValue == 0x4750_4a4d)
        #expect(FourCC.yuyv.description == "YUYV")
        #expect(FourCC("TOOLONG") == nil)
        #expect(PixelFormat(fourCC: .nv12) == .nv12 && PixelFormat(fourCC: .mjpeg) == nil)
        #expect(PixelFormat(name: "gray") == .grey)
        let nv12 = FrameLayout(pixelFormat: .nv12, width: 640, height: 480)
        #expect(nv12.byteCount == 640 * 480 * 3 / 2)
        #expect(nv12.planes[1].offset == 640 * 480)
        let padded = FrameLayout(pixelFormat: .yuyv, width: 638, height: 2, stride: 1280)
        #expect(padded.byteCount == 2560 && padded.rowBytes(plane: 0) == 1276)
    }

    @Test func videoNodesAreSortedNumerically() throws {
        let dir = NSTemporaryDirectory() + "facekit-nodes-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for n in ["video10", "video2", "video0", "videox", "vbi0"] {
            _ = FileManager.default.createFile(atPath: "\(dir)/\(n)", contents: nil)
        }
        #expect(DeviceDiscovery.videoNodes(in: dir) == ["\(dir)/video0", "\(dir)/video2", "\(dir)/video10"])
    }
}
