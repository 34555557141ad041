#!/usr/bin/env python3
"""Model-level verification oracle: real model inputs from the test media and
LiteRT reference-kernel outputs for them.

The Python re-implementation of MediaPipe's face landmarker (mpface.py, which
reproduces MediaPipe to float noise) runs over every test video (VIDEO mode,
one face, as MediaPipe's default) and every still (IMAGE mode, up to 5 faces),
decoded exactly as media.py does (ffmpeg CLI -> RGB24). On a fixed selection
of frames it keeps the tensors each model is actually fed:

    detector     1x128x128x3  letterboxed full frame, [-1, 1]
    landmarks    1x256x256x3  rotated ROI crop (tracked or from the detector), [0, 1]
    blendshapes  1x146x2      (smoothed) landmarks in pixels

and runs LiteRT built WITHOUT default delegates (reference kernels, one
thread) on each, writing float32 .npy files:

    testdata/reference/model-io/<model>/<case>/input.npy
    testdata/reference/model-io/<model>/<case>/output0.npy, output1.npy, ...
    testdata/reference/model-io/index.json
    testdata/reference/calibration/<model>/NNN.npy   (other frames; inputs only)
    testdata/reference/calibration/index.json

Outputs are in the model's output order, with LiteRT's shapes:
    detector     regressors [1,896,16], classificators [1,896,1]
    landmarks    Identity [1,1,1,1434], Identity_1 [1,1,1,1], Identity_2 [1,1]
    blendshapes  [52]

Deterministic (fixed frame selection, single-threaded kernels) and idempotent:
a stamp over the scripts, models, media and library versions is kept in
index.json; nothing is rewritten when it matches (use --force to redo).

Usage: model_io.py [--out testdata/reference] [--force] [--check]
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import media  # noqa: E402

MODEL_FILES = {
    "detector": "face_detector.tflite",
    "landmarks": "face_landmarks_detector.tflite",
    "blendshapes": "face_blendshapes.tflite",
}
GEOMETRY = "geometry_pipeline_metadata_landmarks.binarypb"

# Stills: every image in the test media. The two extra ones (no face) only
# give detector cases.
STILLS = media.IMAGES + ["Image_with_alpha.png", "free-mountain-vector-01.jpg"]
VIDEOS = media.VIDEOS

# Frame selection, per video: test frames are i % STRIDE == 0, calibration
# frames are i % STRIDE == STRIDE // 2 (disjoint from the test frames). The
# frames where the VIDEO-mode pipeline ran the detector and got a face (ROI
# from a detection rather than from tracking: not square, a harder crop) are
# added as landmark/blend-shape test cases too.
STRIDE = {
    "single_face.mp4": 12,            # 72 frames  -> 6 test frames
    "WolfgangLanger_Pexels.mp4": 34,  # 472 frames -> 14
    "face_noface.mov": 21,            # 169 frames -> 9
    "noface_face.mov": 21,            # 169 frames -> 9
    "no_face.mp4": 24,                # 95 frames  -> 4
}
# Calibration caps (evenly subsampled, deterministic).
CALIB_MAX = {"detector": 48, "landmarks": 96, "blendshapes": 256}
# Extra landmark calibration crops from the calibration frames' ROIs, rotated, scaled and
# shifted (rotation rad, scale, x shift in ROI widths): the test cases include detector ROIs
# turned by up to 0.9 rad and ambiguous crops, and int8 conversion must see such inputs too.
LANDMARK_AUGMENT = [(0.9, 1.0, 0.0), (-0.9, 1.0, 0.0), (0.0, 1.4, 0.15), (0.5, 0.8, -0.1)]
# Blend-shape calibration inputs are tiny: take every 3rd non-test frame
# with a face instead of only the STRIDE // 2 frames.
BLEND_CALIB_EVERY = 3

VERSION = 2  # bump when the layout of the output changes


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def lib_versions():
    import cv2
    try:
        from importlib.metadata import version
        litert = version("ai-edge-litert")
    except Exception:  # pragma: no cover
        litert = "unknown"
    return {"python": sys.version.split()[0], "numpy": np.__version__,
            "opencv": cv2.__version__, "ai-edge-litert": litert}


def compute_stamp(models_dir, data_dir):
    parts = {"version": VERSION, "libs": lib_versions(), "scripts": {},
             "models": {}, "media": {}}
    for f in ["model_io.py", "mpface.py", "media.py"]:
        parts["scripts"][f] = sha256_file(os.path.join(HERE, f))
    for f in list(MODEL_FILES.values()) + [GEOMETRY]:
        parts["models"][f] = sha256_file(os.path.join(models_dir, f))
    for f in VIDEOS + STILLS:
        parts["media"][f] = sha256_file(os.path.join(data_dir, f))
    blob = json.dumps(parts, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest(), parts


def up_to_date(out_dir, stamp):
    idx = os.path.join(out_dir, "model-io", "index.json")
    cidx = os.path.join(out_dir, "calibration", "index.json")
    try:
        with open(idx) as f:
            index = json.load(f)
        with open(cidx) as f:
            cindex = json.load(f)
    except (OSError, ValueError):
        return False
    if index.get("stamp") != stamp or cindex.get("stamp") != stamp:
        return False
    for model, cases in index["cases"].items():
        for c in cases:
            d = os.path.join(out_dir, "model-io", model, c["name"])
            for f in ["input.npy"] + [f"output{i}.npy" for i in range(len(c["outputs"]))]:
                if not os.path.isfile(os.path.join(d, f)):
                    return False
    for model, files in cindex["files"].items():
        for e in files:
            if not os.path.isfile(os.path.join(out_dir, "calibration", model, e["file"])):
                return False
    return True


def evenly(items, n):
    """Deterministic even subsample of at most n items, order kept."""
    if len(items) <= n:
        return list(items)
    idx = np.round(np.linspace(0, len(items) - 1, n)).astype(int)
    return [items[i] for i in idx]


def rect_list(r):
    return [float(v) for v in r]


class Collector:
    """Gathers (input tensor, metadata) per model for tests and calibration."""

    def __init__(self):
        self.test = {m: [] for m in MODEL_FILES}
        self.calib = {m: [] for m in MODEL_FILES}

    def add(self, split, model, name, x, meta):
        x = np.ascontiguousarray(x, dtype=np.float32)
        getattr(self, split)[model].append((name, x, meta))


def process_video(fname, fl_cls, models_dir, col, log):
    path = os.path.join(media.DATA, fname)
    stem = media.npz_name(fname)[:-4]
    stride = STRIDE[fname]
    fl = fl_cls(models_dir, running_mode="VIDEO", num_faces=1)
    n_frames = 0
    blend_pool = []
    for i, img, ts in media.iter_video(path):
        n_frames += 1
        h, w = img.shape[:2]
        faces = fl.process(img, ts)
        dbg = fl.debug
        is_test = i % stride == 0
        is_calib = i % stride == stride // 2
        base = dict(media=fname, frame=i, timestamp_ms=ts, width=w, height=h)
        if is_test or is_calib:
            x, _ = fl.detector_input(img)
            meta = dict(base, detector_ran_in_pipeline=bool(dbg.get("ran_detector")))
            col.add("test" if is_test else "calib", "detector",
                    f"{stem}_f{i:04d}", x[None], meta)
        detector_roi = bool(dbg.get("ran_detector")) and len(dbg.get("rois", [])) > 0
        lm_test = is_test or detector_roi
        if lm_test or is_calib:
            for k, rect in enumerate(dbg.get("rois", [])):
                meta = dict(base, roi=rect_list(rect),
                            roi_source="detector" if dbg.get("ran_detector") else "tracking",
                            presence=dbg["landmark_presence_all"][k])
                col.add("test" if lm_test else "calib", "landmarks",
                        f"{stem}_f{i:04d}" + (f"_r{k}" if k else ""),
                        dbg["landmark_tensors"][k][None], meta)
        if is_calib and not lm_test:
            for k, rect in enumerate(dbg.get("rois", [])):
                for j, (drot, dscale, dx) in enumerate(LANDMARK_AUGMENT):
                    r = (rect[0] + dx * rect[2], rect[1], rect[2] * dscale, rect[3] * dscale, rect[4] + drot)
                    x = fl.landmark_input(img, r)
                    col.add("calib", "landmarks", f"{stem}_f{i:04d}_r{k}_aug{j}", x[None],
                            dict(base, roi=[float(v) for v in r], roi_source="augmented"))
        for k, pts in enumerate(dbg.get("blendshape_inputs", [])):
            meta = dict(base, smoothed=True)
            name = f"{stem}_f{i:04d}" + (f"_r{k}" if k else "")
            if lm_test:
                col.add("test", "blendshapes", name, pts, meta)
            elif i % BLEND_CALIB_EVERY == 0 or is_calib:
                blend_pool.append((name, pts, meta))
        del faces
    for name, pts, meta in blend_pool:
        col.add("calib", "blendshapes", name, pts, meta)
    log(f"  {fname}: {n_frames} frames")


def process_still(fname, fl_cls, models_dir, col, log):
    path = os.path.join(media.DATA, fname)
    stem = media.npz_name(fname)[:-4]
    img = media.decode_image(path)
    h, w = img.shape[:2]
    fl = fl_cls(models_dir, running_mode="IMAGE", num_faces=5)
    fl.process(img, 0)
    dbg = fl.debug
    base = dict(media=fname, frame=0, timestamp_ms=0, width=w, height=h)
    x, _ = fl.detector_input(img)
    col.add("test", "detector", stem, x[None], dict(base, detections=len(dbg.get("detections", []))))
    for k, rect in enumerate(dbg.get("rois", [])):
        meta = dict(base, roi=rect_list(rect), roi_source="detector",
                    presence=dbg["landmark_presence_all"][k])
        col.add("test", "landmarks", f"{stem}_r{k}", dbg["landmark_tensors"][k][None], meta)
    for k, pts in enumerate(dbg.get("blendshape_inputs", [])):
        col.add("test", "blendshapes", f"{stem}_r{k}", pts, dict(base, smoothed=False))
    log(f"  {fname}: {len(dbg.get('rois', []))} ROI(s), "
        f"{len(dbg.get('blendshape_inputs', []))} face(s)")


def run_reference(models_dir, col, out_tmp, log):
    from mpface import make_interpreter
    index = {}
    for model, fname in MODEL_FILES.items():
        it = make_interpreter(os.path.join(models_dir, fname), 1, reference_kernels=True)
        inp = it.get_input_details()[0]
        outs = it.get_output_details()
        cases = []
        t0 = time.time()
        for name, x, meta in col.test[model]:
            assert tuple(x.shape) == tuple(inp["shape"]), (model, name, x.shape)
            it.set_tensor(inp["index"], x)
            it.invoke()
            d = os.path.join(out_tmp, "model-io", model, name)
            os.makedirs(d)
            np.save(os.path.join(d, "input.npy"), x)
            shapes, maxabs = [], []
            for k, o in enumerate(outs):
                y = np.array(it.get_tensor(o["index"]), dtype=np.float32)
                np.save(os.path.join(d, f"output{k}.npy"), y)
                shapes.append(list(y.shape))
                maxabs.append(float(np.abs(y).max()))
            cases.append(dict(name=name, input=list(x.shape), outputs=shapes,
                              output_max_abs=maxabs, **meta))
        log(f"  {model}: {len(cases)} cases ({time.time() - t0:.1f}s)")
        index[model] = dict(
            model_file=fname, input_name=inp["name"], input_shape=[int(v) for v in inp["shape"]],
            output_names=[o["name"] for o in outs],
            output_shapes=[[int(v) for v in o["shape"]] for o in outs])
        index[model]["cases"] = cases
    return index


def write_calibration(col, out_tmp):
    cindex = {}
    for model, items in col.calib.items():
        items = evenly(items, CALIB_MAX[model])
        d = os.path.join(out_tmp, "calibration", model)
        os.makedirs(d)
        files = []
        for n, (name, x, meta) in enumerate(items):
            f = f"{n:03d}.npy"
            np.save(os.path.join(d, f), x)
            files.append(dict(file=f, source=name, **meta))
        cindex[model] = files
    return cindex


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(media.REPO, "testdata", "reference"))
    ap.add_argument("--models", default=media.MODELS)
    ap.add_argument("--force", action="store_true", help="regenerate even if up to date")
    ap.add_argument("--check", action="store_true",
                    help="only report whether the files are up to date (exit 1 if not)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()

    def log(msg):
        if not args.quiet:
            print(f"[model_io] {msg}", file=sys.stderr, flush=True)

    for f in list(MODEL_FILES.values()) + [GEOMETRY]:
        if not os.path.isfile(os.path.join(args.models, f)):
            sys.exit(f"[model_io] error: {args.models}/{f} missing: run scripts/fetch-models")
    for f in VIDEOS + STILLS:
        if not os.path.isfile(os.path.join(media.DATA, f)):
            sys.exit(f"[model_io] error: {media.DATA}/{f} missing: run scripts/fetch-testdata")

    stamp, parts = compute_stamp(args.models, media.DATA)
    if not args.force and up_to_date(args.out, stamp):
        log(f"up to date: {args.out}/model-io")
        return 0
    if args.check:
        log("not up to date")
        return 1

    from mpface import FaceLandmarkerPy
    t0 = time.time()
    col = Collector()
    log("running the pipeline over the test media")
    for f in VIDEOS:
        process_video(f, FaceLandmarkerPy, args.models, col, log)
    for f in STILLS:
        process_still(f, FaceLandmarkerPy, args.models, col, log)

    os.makedirs(args.out, exist_ok=True)
    out_tmp = os.path.join(args.out, ".model-io.tmp")
    shutil.rmtree(out_tmp, ignore_errors=True)
    os.makedirs(out_tmp)
    log("running LiteRT (no delegates, 1 thread) on the test inputs")
    models = run_reference(args.models, col, out_tmp, log)
    cindex = write_calibration(col, out_tmp)

    index = dict(
        stamp=stamp, generator="scripts/reference/model_io.py", format_version=VERSION,
        libs=parts["libs"], models_sha256=parts["models"],
        interpreter="ai_edge_litert Interpreter, BUILTIN_WITHOUT_DEFAULT_DELEGATES, num_threads=1",
        pipeline="scripts/reference/mpface.py (v2 projection); videos VIDEO mode num_faces=1, "
                 "stills IMAGE mode num_faces=5; frames decoded by media.py (ffmpeg rgb24)",
        tolerances=dict(coordinates_abs=0.01, scores_rel=1e-4,
                        note="detector output0 and landmarks output0 are coordinates in input "
                             "pixels; the rest are scores/logits/blend shapes. A few detector "
                             "cases (noface_face_mov_f0168, free-mountain-vector-01_jpg) have "
                             "far-off anchors with |regressor| up to ~1.2e4 and |logit| up to "
                             "~3e4, where float32 rounding alone exceeds 0.01 abs (LiteRT XNNPACK "
                             "vs reference kernels: 1.3e-2 / 4.3e-2); see output_max_abs"),
        cases={m: v.pop("cases") for m, v in models.items()}, models=models)
    with open(os.path.join(out_tmp, "model-io", "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    with open(os.path.join(out_tmp, "calibration", "index.json"), "w") as f:
        json.dump(dict(stamp=stamp, generator="scripts/reference/model_io.py",
                       note="model inputs (float32, with batch dim) from frames that are not "
                            "test cases; for int8 calibration",
                       files=cindex), f, indent=1)

    # Swap the new trees in.
    for sub in ["model-io", "calibration"]:
        dst = os.path.join(args.out, sub)
        old = dst + ".old"
        shutil.rmtree(old, ignore_errors=True)
        if os.path.exists(dst):
            os.rename(dst, old)
        os.rename(os.path.join(out_tmp, sub), dst)
        shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(out_tmp, ignore_errors=True)
    counts = {m: len(v) for m, v in index["cases"].items()}
    ccounts = {m: len(v) for m, v in cindex.items()}
    log(f"wrote {args.out}/model-io {counts}, calibration {ccounts} "
        f"in {time.time() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
