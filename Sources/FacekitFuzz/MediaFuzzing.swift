import Capture

/// The replay sources, fed a file as `facekit process` and the kiosk's replay mode open them.
enum MediaFuzzing {
    /// Frames read per input: enough to reach the second frame's header and a truncated tail.
    static let framesPerInput = 3
    /// Largest frame buffer allocated for an input (a 512 × 512 RGB frame, far above the
    /// seeds). The product allocates whatever size a header declares within the source's own
    /// limits; beyond this the harness only starts the source, so that one input costs
    /// microseconds, not the zeroing of a frame of hundreds of megabytes.
    static let maxFrameBytes = 1 << 20

    static func y4m(_ data: UnsafeRawBufferPointer) {
        drain(Y4MSource(path: FuzzScratch.file("input.y4m", data)))
    }

    static func mjpeg(_ data: UnsafeRawBufferPointer) {
        drain(MJPEGFileSource(path: FuzzScratch.file("input.mjpeg", data)))
    }

    /// Only inputs that start like a JPEG: anything else goes to ffmpeg (a subprocess per input),
    /// whose output is fuzzed as `still-pnm`.
    static func stillJPEG(_ data: UnsafeRawBufferPointer) {
        guard data.count >= 3, data[0] == 0xff, data[1] == 0xd8, data[2] == 0xff else { return }
        drain(StillImageSource(path: FuzzScratch.file("input.jpg", data)))
    }

    /// Starts the source and reads frames into a buffer made for its layout, as the pipeline does.
    static func drain(_ source: some FrameSource) {
        do throws(CaptureError) {
            try source.start()
            if source.maxFrameBytes <= maxFrameBytes {
                let buffer = FrameBuffer(layout: source.layout, capacity: source.maxFrameBytes)
                for _ in 0 ..< framesPerInput {
                    guard try source.read(into: buffer, timeoutMs: 0) == .frame else { break }
                }
            }
        } catch {}
        source.stop()
    }
}
