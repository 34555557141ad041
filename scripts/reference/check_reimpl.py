#!/usr/bin/env python3
"""Cross-check of the two oracles: the Python re-implementation (mpface.py,
which model_io.py uses to cut the model inputs) against the real MediaPipe
goldens (mediapipe_golden.py), on every test media with the goldens' options.

Prints per media: face found/not found agreement, max and median per-frame max
|Δxy| in pixels, max |Δ blend shape|, max |Δ matrix|; also checks the decoded
frames (md5) and timestamps are the goldens'. Exits 1 if decode or face-found
agreement differs anywhere, or if a still is off by more than 0.1 px.
(Expected, see the pipeline notes §12: stills ≤ 0.021 px; tracked video up to
~0.7 px through the tracking feedback loop.)

Usage: check_reimpl.py [--goldens testdata/reference/mediapipe] [--json]
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import media  # noqa: E402
from mediapipe_golden import STILLS, VIDEOS  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goldens", default=os.path.join(media.REPO, "testdata", "reference", "mediapipe"))
    ap.add_argument("--models", default=media.MODELS)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from mpface import FaceLandmarkerPy
    ok = True
    report = {}
    for name in VIDEOS + STILLS:
        gp = os.path.join(args.goldens, media.npz_name(name))
        if not os.path.isfile(gp):
            sys.exit(f"[check_reimpl] error: {gp} missing: run scripts/reference/make-mediapipe-golden")
        g = np.load(gp)
        video = str(g["mode"]) == "VIDEO"
        fl = FaceLandmarkerPy(args.models, running_mode="VIDEO" if video else "IMAGE",
                              num_faces=int(g["num_faces_option"]))
        path = os.path.join(media.DATA, name)
        frames = (media.iter_video(path) if video
                  else [(0, media.decode_image(path), 0)])
        agree = decode_ok = 0
        dxy, dbs, dm = [], [], []
        for i, fr, ts in frames:
            decode_ok += (media.md5(fr) == g["frame_md5"][i] and ts == g["timestamp_ms"][i])
            faces = fl.process(fr, ts)
            n = len(faces)
            agree += (n > 0) == bool(g["face_found"][i])
            if n and g["face_found"][i]:
                h, w = fr.shape[:2]
                d = (faces[0]["landmarks"][:, :2] - g["landmarks"][i, 0, :, :2]) * [w, h]
                dxy.append(float(np.abs(d).max()))
                dbs.append(float(np.abs(faces[0]["blendshapes"] - g["blendshapes"][i, 0]).max()))
                dm.append(float(np.abs(faces[0]["matrix"] - g["matrix"][i, 0]).max()))
        n = len(g["frame_index"])
        r = dict(frames=n, decode_match=decode_ok, face_found_agree=agree)
        if dxy:
            r.update(max_dxy_px=max(dxy), median_dxy_px=float(np.median(dxy)),
                     max_dblendshape=max(dbs), max_dmatrix=max(dm))
        report[name] = r
        bad = decode_ok != n or agree != n or (not video and dxy and max(dxy) > 0.1)
        ok &= not bad
        if not args.json:
            extra = (f"  max|dxy| {max(dxy):.3f}px (median {np.median(dxy):.3f})  "
                     f"max|dbs| {max(dbs):.1e}  max|dM| {max(dm):.1e}") if dxy else ""
            print(f"{'FAIL' if bad else 'ok  '} {name}: decode {decode_ok}/{n}, "
                  f"face found agrees {agree}/{n}{extra}")
    if args.json:
        print(json.dumps(report))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
