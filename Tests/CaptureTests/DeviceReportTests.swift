import Testing
@testable import Capture

/// The text `facekit devices` prints for a camera (board/emulated/tests/devices.sh reads it on vivid).
@Suite struct DeviceReportTests {
    @Test func cameraLinesNameFormatsSizesRatesAndControls() {
        let yuyv = CameraFormatInfo(fourcc: "YUYV", description: "YUYV 4:2:2", compressed: false,
                                    sizes: [.init(width: 640, height: 480, fps: [30, 29.97]), .init(width: 320, height: 240, fps: [])],
                                    sizeKind: "discrete")
        let mjpg = CameraFormatInfo(fourcc: "MJPG", description: "Motion-JPEG", compressed: true,
                                    sizes: [.init(width: 16, height: 16, fps: []), .init(width: 1920, height: 1080, fps: [60])],
                                    sizeKind: "stepwise")
        let gain = ControlInfo(id: 1, name: "gain", type: "int", minimum: 0, maximum: 255, step: 1, defaultValue: 0, value: 7, menu: nil)
        let expo = ControlInfo(id: 2, name: "exposure", type: "int", minimum: 1, maximum: 9, step: 1, defaultValue: 1, value: nil, menu: nil)
        let c = CameraInfo(path: "/dev/video0", driver: "vivid", card: "vivid0", busInfo: "platform:vivid-000",
                           formats: [yuyv, mjpg], controls: [gain, expo])
        #expect(c.reportLines == [
            "  /dev/video0  vivid0  [vivid, platform:vivid-000]",
            "    YUYV  YUYV 4:2:2: 640x480@30/29.97, 320x240",
            "    MJPG  Motion-JPEG: 16x16 .. 1920x1080@60",
            "    controls: gain=7 [0..255], exposure=? [1..9]",
        ])
        var bare = c
        bare.formats = []; bare.controls = []
        #expect(bare.reportLines == ["  /dev/video0  vivid0  [vivid, platform:vivid-000]"])
    }
}
