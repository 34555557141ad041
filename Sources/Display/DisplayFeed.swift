import FaceTracking
import Foundation
import LinuxSystem

/// The hand-off from the tracking thread to the display thread: three `DisplayFrame`s that change
/// owner by pointer swaps under a lock held for a few instructions. The tracker fills one only when
/// the display has asked for a new frame (so at the display's rate, not the camera's), and only
/// with `tryLock`: if the display thread holds the lock at that instant the tracker skips the
/// frame and carries on. The display always gets the newest frame the tracker finished.
package final class DisplayFeed: @unchecked Sendable {
    package let maxPreviewWidth: Int
    package let maxPreviewHeight: Int
    private let lock = NSLock()
    /// Owned by the tracking thread between offers.
    private var back: DisplayFrame
    /// The newest finished frame, waiting for the display.
    private var ready: DisplayFrame
    private var readyIsNew = false
    private var wanted = true
    /// Frames the tracker filled, and offers skipped because the lock was busy.
    package private(set) var published: UInt64 = 0
    package private(set) var skippedBusy: UInt64 = 0

    package init(maxPreviewWidth: Int = 320, maxPreviewHeight: Int = 240) {
        self.maxPreviewWidth = maxPreviewWidth; self.maxPreviewHeight = maxPreviewHeight
        back = DisplayFrame(previewCapacity: maxPreviewWidth * maxPreviewHeight)
        ready = DisplayFrame(previewCapacity: maxPreviewWidth * maxPreviewHeight)
    }

    /// A slot for the display thread's own use (`take` swaps it with the newest frame).
    package func makeFrame() -> DisplayFrame { DisplayFrame(previewCapacity: maxPreviewWidth * maxPreviewHeight) }

    /// Tracking thread: offers the frame just tracked, with face 0's session ID. Returns at once
    /// unless the display wants a frame, and never waits for the lock.
    package func offer(_ image: PixelImage, _ frame: FaceFrame, faceID: Int32 = 0) {
        guard lock.try() else { skippedBusy &+= 1; return }
        let want = wanted
        lock.unlock()
        guard want else { return }
        back.fill(image: image, frame: frame, faceID: faceID, maxWidth: maxPreviewWidth, maxHeight: maxPreviewHeight)
        guard lock.try() else { skippedBusy &+= 1; return }
        swap(&back, &ready)
        readyIsNew = true
        wanted = false
        published &+= 1
        lock.unlock()
    }

    /// Display thread: if a newer frame is ready, swaps it into `frame` (whose old slot goes back
    /// into circulation) and returns true; asks the tracker for the next one either way.
    package func take(_ frame: inout DisplayFrame) -> Bool {
        lock.lock()
        defer { wanted = true; lock.unlock() }
        guard readyIsNew else { return false }
        swap(&frame, &ready)
        readyIsNew = false
        return true
    }
}
