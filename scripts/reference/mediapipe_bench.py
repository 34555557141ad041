#!/usr/bin/env python3
"""MediaPipe's own per-frame time on the test media: the yardstick for
`facekit bench pipeline`.

Frames are decoded first, exactly as media.py does (ffmpeg CLI -> RGB24), so
decoding is excluded; the timed call is FaceLandmarker.detect_for_video()
(VIDEO mode, timestamps per media.py, MediaPipe's default options plus blend
shapes and matrices, as mediapipe_golden.py) or detect() for stills (IMAGE
mode). That covers MediaPipe's warp, inference (XNNPACK, 1 inference thread,
fixed by MediaPipe) and post-processing; wrapping the frame in an mp.Image
happens outside the timer.

A video is first run for --warmup frames on a throw-away landmarker, then
timed over all frames (or --max-frames) on a fresh one, so the timed run sees
the same detection/tracking sequence as the goldens. A still is timed over
--repeat calls after --warmup calls.

    mediapipe_bench.py MEDIA... [--json] [--warmup 10] [--repeat 20]
                       [--max-frames N] [--pin CPU]

MEDIA is a path or a file name in testdata/. With --json, stdout is one JSON
object keyed by the media's file name:
    {"single_face.mp4": {"mode": "VIDEO", "frames": 72, "median_ms": ..,
      "p90_ms": .., "mean_ms": .., "fps": .., "frames_with_face": ..,
      "median_ms_face": .., "median_ms_noface": .., "mediapipe": "1.2.3", ...}}
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import media  # noqa: E402
from mediapipe_golden import make_landmarker, mp_version, to_mp_image  # noqa: E402

IMAGE_EXT = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}


def stats(ts_ms, found):
    ts = np.asarray(ts_ms)
    found = np.asarray(found, bool)
    r = dict(frames=int(ts.size),
             median_ms=round(float(np.median(ts)), 4),
             p90_ms=round(float(np.percentile(ts, 90)), 4),
             mean_ms=round(float(ts.mean()), 4),
             min_ms=round(float(ts.min()), 4),
             fps=round(1000.0 / float(ts.mean()), 2),
             frames_with_face=int(found.sum()))
    r["median_ms_face"] = round(float(np.median(ts[found])), 4) if found.any() else None
    r["median_ms_noface"] = round(float(np.median(ts[~found])), 4) if (~found).any() else None
    return r


def bench_video(path, task, args):
    frames, tss = media.decode_video(path)
    if args.max_frames:
        frames, tss = frames[:args.max_frames], tss[:args.max_frames]
    imgs = [to_mp_image(f) for f in frames]
    if args.warmup:
        with make_landmarker(task, True, 1) as fl:
            for img, ts in list(zip(imgs, tss))[:args.warmup]:
                fl.detect_for_video(img, int(ts))
    times, found = [], []
    with make_landmarker(task, True, 1) as fl:
        for img, ts in zip(imgs, tss):
            t0 = time.perf_counter_ns()
            res = fl.detect_for_video(img, int(ts))
            times.append((time.perf_counter_ns() - t0) / 1e6)
            found.append(len(res.face_landmarks) > 0)
    r = dict(mode="VIDEO", width=int(frames.shape[2]), height=int(frames.shape[1]))
    r.update(stats(times, found))
    return r


def bench_still(path, task, args):
    frame = media.decode_image(path)
    img = to_mp_image(frame)
    times, found = [], []
    with make_landmarker(task, False, 1) as fl:
        for _ in range(args.warmup):
            fl.detect(img)
        for _ in range(args.repeat):
            t0 = time.perf_counter_ns()
            res = fl.detect(img)
            times.append((time.perf_counter_ns() - t0) / 1e6)
            found.append(len(res.face_landmarks) > 0)
    r = dict(mode="IMAGE", width=int(frame.shape[1]), height=int(frame.shape[0]),
             repeat=args.repeat)
    r.update(stats(times, found))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("media", nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=20, help="timed calls per still")
    ap.add_argument("--max-frames", type=int, default=0)
    ap.add_argument("--pin", type=int, default=None, metavar="CPU")
    ap.add_argument("--task", default=media.TASK)
    args = ap.parse_args()
    if args.warmup < 0 or args.repeat < 1 or args.max_frames < 0:
        ap.error("--warmup >= 0, --repeat >= 1, --max-frames >= 0")
    if not os.path.isfile(args.task):
        sys.exit(f"[mediapipe_bench] error: {args.task} missing: run scripts/fetch-models")
    paths = []
    for m in args.media:
        p = m if os.path.exists(m) else os.path.join(media.DATA, m)
        if not os.path.isfile(p):
            sys.exit(f"[mediapipe_bench] error: {m}: no such media file")
        paths.append(p)
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    mpv = mp_version()
    out = {}
    for p in paths:
        still = os.path.splitext(p)[1].lower() in IMAGE_EXT
        try:
            r = (bench_still if still else bench_video)(p, args.task, args)
        except Exception as e:  # unreadable media and the like
            sys.exit(f"[mediapipe_bench] error: {p}: {e}")
        r.update(mediapipe=mpv, warmup=args.warmup, pinned_cpu=args.pin,
                 timed="detect_for_video/detect only (decode and mp.Image wrapping excluded)")
        out[os.path.basename(p)] = r
    if args.json:
        print(json.dumps(out))
    else:
        for name, r in out.items():
            print(f"{name}: {r['mode']} {r['frames']} frame(s), median {r['median_ms']:.2f} ms, "
                  f"p90 {r['p90_ms']:.2f} ms, mean {r['mean_ms']:.2f} ms ({r['fps']:.1f} fps), "
                  f"face in {r['frames_with_face']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
