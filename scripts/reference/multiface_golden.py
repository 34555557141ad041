#!/usr/bin/env python3
"""Multi-face oracle: the real MediaPipe FaceLandmarker with num_faces 8 (the
options of mediapipe_golden.py otherwise: confidences 0.5, blend shapes and
transformation matrices on). Videos are decoded by media.py (ffmpeg, as
`facekit process` decodes them); stills are read by MediaPipe itself
(`mp.Image.create_from_file`), as a MediaPipe user reads a photo: its JPEG
decoder agrees with the libjpeg `facekit process` uses for stills to within 3
levels, where ffmpeg's differs by up to 43 on multi_face.jpg, enough to move
the landmarks of its small faces by 2 % of their inter-ocular distance.

  multiface_golden.py stills [--out DIR] [--force]
      every still of media.IMAGES in IMAGE mode ->
      DIR/<stem>_<ext>_faces8.npz + DIR/summary.json (default DIR:
      testdata/reference/mediapipe-multiface). Idempotent: a stamp over this
      script, mediapipe_golden.py, media.py, the task file, the media and the
      versions is kept in summary.json.
  multiface_golden.py video MEDIA OUT.npz
      one video in VIDEO mode (the synthetic two-face video the tests make
      with two_face_video.py at run time; it is not committed, so neither is
      its golden).

The .npz arrays are those of mediapipe_golden.py (landmarks [N, 8, 478, 3],
NaN where a face slot is empty; num_faces [N]; frame_md5 ...).
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
import mediapipe_golden as mg  # noqa: E402

NUM_FACES = 8


def run(path, video, out, task):
    rec = mg.Recorder(NUM_FACES)
    with mg.make_landmarker(task, video, NUM_FACES) as fl:
        if video:
            for i, frame, ts in media.iter_video(path):
                rec.add(i, ts, frame, fl.detect_for_video(mg.to_mp_image(frame), int(ts)))
            h, w = frame.shape[:2]
        else:
            import mediapipe as mp
            img = mp.Image.create_from_file(path)
            frame = np.array(img.numpy_view())
            if frame.ndim == 2 or frame.shape[2] != 3:
                # A greyscale (or RGBA) photo: the landmarker takes RGB; grey is repeated, as
                # facekit's decoder expands it.
                frame = np.repeat(frame.reshape(frame.shape[0], frame.shape[1], -1)[:, :, :1], 3, axis=2) \
                    if frame.ndim == 2 or frame.shape[2] == 1 else frame[:, :, :3]
                img = mg.to_mp_image(frame)
            rec.add(0, 0, frame, fl.detect(img))
            h, w = frame.shape[:2]
    arrs = rec.arrays()
    tmp = out + ".tmp.npz"
    np.savez(tmp, mode=np.array("VIDEO" if video else "IMAGE"),
             mediapipe_version=np.array(mg.mp_version()), width=np.array(w), height=np.array(h),
             num_faces_option=np.array(NUM_FACES), **arrs)
    os.replace(tmp, out)
    return dict(file=os.path.basename(out), mode="VIDEO" if video else "IMAGE", width=int(w), height=int(h),
                frames=len(arrs["frame_index"]), max_faces=int(arrs["num_faces"].max()),
                faces_per_frame=sorted(set(int(n) for n in arrs["num_faces"])))


def stills(args):
    os.makedirs(args.out, exist_ok=True)
    spath = os.path.join(args.out, "summary.json")
    try:
        with open(spath) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = {}
    summary.setdefault("media", {})
    base = dict(mediapipe=mg.mp_version(), numpy=np.__version__, task=mg.sha256_file(args.task),
                script=mg.sha256_file(os.path.abspath(__file__)),
                golden_py=mg.sha256_file(os.path.join(HERE, "mediapipe_golden.py")),
                media_py=mg.sha256_file(os.path.join(HERE, "media.py")))
    for name in media.IMAGES:
        path = os.path.join(media.DATA, name)
        if not os.path.isfile(path):
            sys.exit(f"[multiface_golden] error: {path} missing: run scripts/fetch-testdata")
        stamp = hashlib.sha256(json.dumps(dict(base, media=name, sha=mg.sha256_file(path)), sort_keys=True).encode()).hexdigest()
        out = os.path.join(args.out, media.npz_name(name)[:-4] + f"_faces{NUM_FACES}.npz")
        s = summary["media"].get(name)
        if not args.force and s and s.get("stamp") == stamp and os.path.isfile(out):
            continue
        t0 = time.time()
        s = run(path, False, out, args.task)
        s["stamp"] = stamp
        summary["media"][name] = s
        print(f"[multiface_golden] {s['file']}: {s['max_faces']} face(s), {time.time() - t0:.1f}s", file=sys.stderr)
    summary.update(generator="scripts/reference/multiface_golden.py", mediapipe=base["mediapipe"],
                   num_faces=NUM_FACES, options="IMAGE mode, stills read by mp.Image.create_from_file; "
                                                "confidences 0.5; blend shapes + matrices")
    summary["media"] = dict(sorted(summary["media"].items()))
    with open(spath + ".tmp", "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(spath + ".tmp", spath)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stills")
    s.add_argument("--out", default=os.path.join(media.REPO, "testdata", "reference", "mediapipe-multiface"))
    s.add_argument("--force", action="store_true")
    v = sub.add_parser("video")
    v.add_argument("media")
    v.add_argument("out")
    for p in (s, v):
        p.add_argument("--task", default=media.TASK)
    args = ap.parse_args()
    if not os.path.isfile(args.task):
        sys.exit(f"[multiface_golden] error: {args.task} missing: run scripts/fetch-models")
    if args.cmd == "stills":
        stills(args)
    else:
        print(json.dumps(run(args.media, True, args.out, args.task)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
