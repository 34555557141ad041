"""MediaPipe's side of the frame in scripts/arm-bench: its face landmarker pipeline (PyPI
mediapipe, the same version and options as the x86 references) on consecutive frames of a test
video, run by an arm64 CPython 3.11 under qemu-aarch64 with the bbcount plugin.

    mediapipe_run.py TASK FRAMES.npy TIMESTAMPS.npy WARMUP COUNT OUTDIR

FRAMES.npy holds RGB frames (N x H x W x 3, uint8; decoded on the host, so decoding is not
counted), TIMESTAMPS.npy their times in ms. The first WARMUP frames run uncounted: the first one
detects the face, and every call after it only tracks it, as on a kiosk; the window then spans
the next COUNT calls of detect_for_video(), so the caller divides by COUNT. Wrapping a frame in an
mp.Image happens before the window opens. Writes OUTDIR/faces.txt (faces found per counted frame:
the counted frames must all be tracked ones) and OUTDIR/maps.
"""
import ctypes, os, sys, types
import numpy as np

# mediapipe's package import pulls in its drawing helpers, which import OpenCV and matplotlib; the
# landmarker never calls them. Empty modules stand in (any use would raise AttributeError), so the
# arm64 tree needs neither library's wheels.
for name in ("cv2", "matplotlib", "matplotlib.pyplot"):
    sys.modules.setdefault(name, types.ModuleType(name))
import mediapipe as mp  # noqa: E402

# The landmarker and its options are the x86 references' own (scripts/reference), so the work
# counted here is the work those references time.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "reference"))
from mediapipe_golden import make_landmarker, to_mp_image  # noqa: E402

MARK_SYSCALL = 4081   # bbcount's sys= marker; the kernel (QEMU) answers ENOSYS


def main():
    task, frames_path, ts_path, warmup, count, out = sys.argv[1:7]
    warmup, count = int(warmup), int(count)
    os.makedirs(out, exist_ok=True)
    frames, ts = np.load(frames_path), np.load(ts_path)
    if warmup < 1 or count < 1 or warmup + count > len(frames):
        sys.exit("mediapipe_run.py: need 1 <= WARMUP and WARMUP + COUNT <= %d frames" % len(frames))
    images = [to_mp_image(f) for f in frames[:warmup + count]]
    libc = ctypes.CDLL(None, use_errno=True)
    found = []
    with make_landmarker(task, True, 1) as fl:
        for i in range(warmup):
            fl.detect_for_video(images[i], int(ts[i]))
        libc.syscall(MARK_SYSCALL, 0xFACE)
        for i in range(warmup, warmup + count):
            found.append(len(fl.detect_for_video(images[i], int(ts[i])).face_landmarks))
        libc.syscall(MARK_SYSCALL, 0xFACE)
        with open("/proc/self/maps") as f, open(os.path.join(out, "maps"), "w") as g:
            g.write(f.read())
    with open(os.path.join(out, "faces.txt"), "w") as g:
        g.write(" ".join(str(n) for n in found) + "\n")
    print("mediapipe %s: %d counted frames, faces %s" % (mp.__version__, count, found))


if __name__ == "__main__":
    main()
