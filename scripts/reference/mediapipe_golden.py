#!/usr/bin/env python3
"""Pipeline-level oracle: the real MediaPipe FaceLandmarker (PyPI `mediapipe`,
pinned in scripts/deps/requirements-verify.txt) on every test video (VIDEO
mode, timestamps per media.py) and still (IMAGE mode), frames decoded exactly
as media.py does (ffmpeg CLI -> RGB24). Task options are MediaPipe's defaults
(num_faces 1, all confidences 0.5) with blend shapes and transformation
matrices on; the task file is models/face_landmarker_v2.task.

Writes testdata/reference/mediapipe/<stem>_<ext>.npz per media:
    mode                str   "VIDEO" | "IMAGE"
    mediapipe_version   str
    width, height       int
    num_faces_option    int   K (the task's num_faces)
    frame_index         int64 [N]
    timestamp_ms        int64 [N]   (VIDEO: the detect_for_video timestamps; IMAGE: 0)
    frame_md5           str   [N]   md5 of the RGB24 frame bytes (decode check)
    num_faces           int32 [N]   faces returned (0..K)
    face_found          bool  [N]   num_faces > 0
    landmarks           f32 [N, K, 478, 3]  normalized x, y, z (NaN where no face)
    blendshapes         f32 [N, K, 52]      in model order (NaN where no face)
    blendshape_names    str [52]
    matrix              f32 [N, K, 4, 4]    facial transformation matrix, row-major
and testdata/reference/mediapipe/summary.json (per media: frames, frames with
a face, mode, size, time). Idempotent: a stamp over script, task file, media
and versions is kept in summary.json (--force to redo).

Extra: multi_face.jpg is also run with num_faces 5 -> multi_face_jpg_faces5.npz
(summary key "multi_face.jpg@faces5").

Usage: mediapipe_golden.py [--out DIR] [--force] [--only NAME ...] [--num-faces K]
"""
import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import media  # noqa: E402

VERSION = 1
STILLS = media.IMAGES + ["Image_with_alpha.png", "free-mountain-vector-01.jpg"]
VIDEOS = media.VIDEOS
# Extra runs with more faces (the default num_faces=1 returns no face on
# multi_face.jpg: its top detection fails the presence test).
EXTRA = [("multi_face.jpg", 5)]


def out_name(name, num_faces, default_faces):
    n = media.npz_name(name)
    return n if num_faces == default_faces else n[:-4] + f"_faces{num_faces}.npz"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def mp_version():
    from importlib.metadata import version
    return version("mediapipe")


def make_landmarker(task, video, num_faces):
    from mediapipe.tasks.python import BaseOptions, vision
    opts = vision.FaceLandmarkerOptions(
        base_options=BaseOptions(model_asset_path=task),
        running_mode=vision.RunningMode.VIDEO if video else vision.RunningMode.IMAGE,
        num_faces=num_faces,
        min_face_detection_confidence=0.5,
        min_face_presence_confidence=0.5,
        min_tracking_confidence=0.5,
        output_face_blendshapes=True,
        output_facial_transformation_matrixes=True)
    return vision.FaceLandmarker.create_from_options(opts)


def to_mp_image(frame):
    import mediapipe as mp
    return mp.Image(image_format=mp.ImageFormat.SRGB, data=np.ascontiguousarray(frame))


class Recorder:
    def __init__(self, k):
        self.k = k
        self.rows = []
        self.names = None

    def add(self, i, ts, frame, res):
        k = self.k
        lm = np.full((k, 478, 3), np.nan, np.float32)
        bs = np.full((k, 52), np.nan, np.float32)
        mx = np.full((k, 4, 4), np.nan, np.float32)
        n = len(res.face_landmarks)
        for f in range(min(n, k)):
            lm[f] = [(p.x, p.y, p.z) for p in res.face_landmarks[f]]
            if res.face_blendshapes:
                cats = res.face_blendshapes[f]
                bs[f] = [c.score for c in cats]
                if self.names is None:
                    self.names = [c.category_name for c in cats]
            if res.facial_transformation_matrixes:
                mx[f] = np.asarray(res.facial_transformation_matrixes[f], np.float32).reshape(4, 4)
        self.rows.append((i, ts, media.md5(frame), n, lm, bs, mx))

    def arrays(self):
        r = self.rows
        return dict(
            frame_index=np.array([x[0] for x in r], np.int64),
            timestamp_ms=np.array([x[1] for x in r], np.int64),
            frame_md5=np.array([x[2] for x in r], dtype="U32"),
            num_faces=np.array([x[3] for x in r], np.int32),
            face_found=np.array([x[3] > 0 for x in r], bool),
            landmarks=np.stack([x[4] for x in r]),
            blendshapes=np.stack([x[5] for x in r]),
            matrix=np.stack([x[6] for x in r]),
        )


def run_media(name, task, num_faces, out_dir, out_file, log):
    path = os.path.join(media.DATA, name)
    video = name in VIDEOS
    rec = Recorder(num_faces)
    t_det = []
    t0 = time.time()
    with make_landmarker(task, video, num_faces) as fl:
        if video:
            for i, frame, ts in media.iter_video(path):
                img = to_mp_image(frame)
                t = time.perf_counter()
                res = fl.detect_for_video(img, int(ts))
                t_det.append(time.perf_counter() - t)
                rec.add(i, ts, frame, res)
            w, h = frame.shape[1], frame.shape[0]
        else:
            frame = media.decode_image(path)
            img = to_mp_image(frame)
            t = time.perf_counter()
            res = fl.detect(img)
            t_det.append(time.perf_counter() - t)
            rec.add(0, 0, frame, res)
            h, w = frame.shape[:2]
    arrs = rec.arrays()
    from mpface import BLENDSHAPE_NAMES
    names = rec.names or BLENDSHAPE_NAMES
    assert names == BLENDSHAPE_NAMES, names
    out = os.path.join(out_dir, out_file)
    tmp = out + ".tmp.npz"
    np.savez(tmp, mode=np.array("VIDEO" if video else "IMAGE"),
             mediapipe_version=np.array(mp_version()), width=np.array(w), height=np.array(h),
             num_faces_option=np.array(num_faces),
             blendshape_names=np.array(names), **arrs)
    os.replace(tmp, out)
    n = len(arrs["frame_index"])
    found = int(arrs["face_found"].sum())
    log(f"  {out_file}: {n} frame(s), face in {found}, {time.time() - t0:.1f}s")
    return dict(file=os.path.basename(out), mode="VIDEO" if video else "IMAGE",
                width=int(w), height=int(h), frames=n, frames_with_face=found,
                num_faces_option=num_faces, max_faces=int(arrs["num_faces"].max()),
                detect_median_ms=round(float(np.median(t_det)) * 1000, 3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(media.REPO, "testdata", "reference", "mediapipe"))
    ap.add_argument("--task", default=media.TASK)
    ap.add_argument("--num-faces", type=int, default=1)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="media file names (default: all)")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()

    def log(msg):
        if not args.quiet:
            print(f"[mediapipe_golden] {msg}", file=sys.stderr, flush=True)

    if not os.path.isfile(args.task):
        sys.exit(f"[mediapipe_golden] error: {args.task} missing: run scripts/fetch-models")
    names = args.only or (VIDEOS + STILLS)
    for n in names:
        if n not in VIDEOS + STILLS:
            sys.exit(f"[mediapipe_golden] error: unknown media {n}")
        if not os.path.isfile(os.path.join(media.DATA, n)):
            sys.exit(f"[mediapipe_golden] error: {media.DATA}/{n} missing: run scripts/fetch-testdata")

    try:
        mpv = mp_version()
    except Exception:
        sys.exit("[mediapipe_golden] error: mediapipe not installed: run scripts/install-deps")
    base = dict(version=VERSION, mediapipe=mpv, numpy=np.__version__,
                task=sha256_file(args.task),
                script=sha256_file(os.path.abspath(__file__)),
                media_py=sha256_file(os.path.join(HERE, "media.py")))

    def stamp_for(n, k):
        d = dict(base, media=n, num_faces=k, media_sha256=sha256_file(os.path.join(media.DATA, n)))
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()

    os.makedirs(args.out, exist_ok=True)
    spath = os.path.join(args.out, "summary.json")
    try:
        with open(spath) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = {}
    summary.setdefault("media", {})
    runs = [(n, args.num_faces) for n in names] + [(n, k) for n, k in EXTRA if n in names]
    todo = []
    for n, k in runs:
        f = out_name(n, k, args.num_faces)
        key = n if k == args.num_faces else f"{n}@faces{k}"
        s = summary["media"].get(key)
        if (args.force or not s or s.get("stamp") != stamp_for(n, k)
                or not os.path.isfile(os.path.join(args.out, f))):
            todo.append((n, k, f, key))
    if not todo:
        log(f"up to date: {args.out}")
        return 0
    log(f"MediaPipe {mpv}: {len(todo)} media file(s)")
    t0 = time.time()
    for n, k, f, key in todo:
        s = run_media(n, args.task, k, args.out, f, log)
        s["stamp"] = stamp_for(n, k)
        summary["media"][key] = s
        summary.update(generator="scripts/reference/mediapipe_golden.py", mediapipe=mpv,
                       task=os.path.relpath(args.task, media.REPO), num_faces=args.num_faces,
                       options="VIDEO mode for videos, IMAGE mode for stills; confidences 0.5; "
                               "blend shapes + transformation matrices")
        summary["media"] = dict(sorted(summary["media"].items()))
        tmp = spath + ".tmp"
        with open(tmp, "w") as f:
            json.dump(summary, f, indent=1)
        os.replace(tmp, spath)
    log(f"done in {time.time() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
