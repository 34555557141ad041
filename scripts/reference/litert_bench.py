#!/usr/bin/env python3
"""LiteRT latency of the three face landmarker models, the yardstick for
`facekit bench models`.

For each model: median and p90 wall time of Interpreter.invoke() (ms) with
num_threads=1, after warm-up, on one real input from the test media, both
with LiteRT's default XNNPACK delegate (what MediaPipe runs; the realistic
competitor) and without delegates (the builtin kernels our float engine is
checked against).

    litert_bench.py MODEL_DIR [--runs N] [--warmup W] [--json] [--pin CPU]
                    [--inputs testdata/reference/model-io] [--only MODEL ...] [--serve]

With --json, stdout is one JSON object:
    {"detector": {"xnnpack_median_ms": .., "xnnpack_p90_ms": .., "ref_median_ms": ..,
                  "ref_p90_ms": .., ...}, "landmarks": {...}, "blendshapes": {...}}
Inputs come from the model-io cases of single_face.jpg (make-model-io); if
those are missing they are computed the same way from testdata/single_face.jpg.

With --serve, the interpreters are set up once and timings are given on
request, so that `facekit bench models` can alternate between its engine and
LiteRT in short rounds (both then see the same load on a shared machine).
The first stdout line is {"ready": true, "litert": VERSION, "inputs": {...}};
then each stdin line "run MODEL xnnpack|ref N" is answered with one line
{"ms": [N times]} (or {"error": "..."}), and "quit" (or EOF) ends it.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MODELS = {
    "detector": ("face_detector.tflite", "single_face_jpg"),
    "landmarks": ("face_landmarks_detector.tflite", "single_face_jpg_r0"),
    "blendshapes": ("face_blendshapes.tflite", "single_face_jpg_r0"),
}


def real_inputs(inputs_dir, models_dir):
    out = {}
    for m, (_, case) in MODELS.items():
        p = os.path.join(inputs_dir, m, case, "input.npy")
        if os.path.isfile(p):
            out[m] = (np.load(p), f"model-io/{m}/{case}")
    if len(out) == len(MODELS):
        return out
    # Fallback: same tensors, computed from the still through the pipeline.
    import media
    from mpface import FaceLandmarkerPy
    img = media.decode_image(os.path.join(media.DATA, "single_face.jpg"))
    fl = FaceLandmarkerPy(models_dir, running_mode="IMAGE", num_faces=1)
    fl.process(img, 0)
    d = fl.debug
    src = "computed from testdata/single_face.jpg"
    out.setdefault("detector", (d["detector_tensor"][None], src))
    out.setdefault("landmarks", (d["landmark_tensors"][0][None], src))
    out.setdefault("blendshapes", (d["blendshape_inputs"][0], src))
    return out


def set_input(interp, x):
    interp.set_tensor(interp.get_input_details()[0]["index"], np.ascontiguousarray(x, np.float32))


def timed(interp, runs):
    """Wall time of `runs` invokes, ms each."""
    ts = np.empty(runs)
    for i in range(runs):
        t0 = time.perf_counter_ns()
        interp.invoke()
        ts[i] = (time.perf_counter_ns() - t0) / 1e6
    return ts


def bench(interp, x, runs, warmup):
    set_input(interp, x)
    for _ in range(warmup):
        interp.invoke()
    return timed(interp, runs)


def serve(args, inputs, litert):
    from mpface import make_interpreter
    interps = {}
    for m in args.only:
        path = os.path.join(args.model_dir, MODELS[m][0])
        for tag, ref in (("xnnpack", False), ("ref", True)):
            it = make_interpreter(path, num_threads=1, reference_kernels=ref)
            set_input(it, inputs[m][0])
            interps[(m, tag)] = it
    print(json.dumps({"ready": True, "litert": litert, "inputs": {m: inputs[m][1] for m in args.only}}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if len(words) != 4 or words[0] != "run" or (words[1], words[2]) not in interps or not words[3].isdigit():
            print(json.dumps({"error": f"unknown request {line.strip()!r}; use: run MODEL xnnpack|ref N"}), flush=True)
            continue
        print(json.dumps({"ms": timed(interps[(words[1], words[2])], int(words[3])).tolist()}), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", nargs="?", default=os.path.join(
        os.path.dirname(os.path.dirname(HERE)), "models"))
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--pin", type=int, default=None, metavar="CPU",
                    help="pin this process to one CPU (sched_setaffinity)")
    ap.add_argument("--inputs", default=os.path.join(
        os.path.dirname(os.path.dirname(HERE)), "testdata", "reference", "model-io"))
    ap.add_argument("--only", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--serve", action="store_true", help="time invokes on request (see above)")
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0:
        ap.error("--runs must be >= 1 and --warmup >= 0")
    for m in args.only:
        p = os.path.join(args.model_dir, MODELS[m][0])
        if not os.path.isfile(p):
            sys.exit(f"[litert_bench] error: {p} missing: run scripts/fetch-models")
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})

    from importlib.metadata import version
    from mpface import make_interpreter
    litert = version("ai-edge-litert")
    inputs = real_inputs(args.inputs, args.model_dir)
    if args.serve:
        return serve(args, inputs, litert)
    result = {}
    for m in args.only:
        path = os.path.join(args.model_dir, MODELS[m][0])
        x, src = inputs[m]
        r = {}
        for tag, ref in (("xnnpack", False), ("ref", True)):
            it = make_interpreter(path, num_threads=1, reference_kernels=ref)
            ts = bench(it, x, args.runs, args.warmup)
            r[f"{tag}_median_ms"] = round(float(np.median(ts)), 4)
            r[f"{tag}_p90_ms"] = round(float(np.percentile(ts, 90)), 4)
            r[f"{tag}_min_ms"] = round(float(ts.min()), 4)
            r[f"{tag}_mean_ms"] = round(float(ts.mean()), 4)
            r[f"{tag}_ops"] = len(it._get_ops_details())
            del it
        r.update(runs=args.runs, warmup=args.warmup, num_threads=1,
                 input=src, input_shape=list(x.shape), litert=litert)
        result[m] = r
    if args.json:
        print(json.dumps(result))
    else:
        print(f"LiteRT {litert}, num_threads=1, {args.runs} runs after {args.warmup} warm-up")
        print(f"{'model':<12} {'XNNPACK med':>11} {'p90':>8} {'no-deleg med':>12} {'p90':>8}")
        for m, r in result.items():
            print(f"{m:<12} {r['xnnpack_median_ms']:>9.3f}ms {r['xnnpack_p90_ms']:>6.3f}ms "
                  f"{r['ref_median_ms']:>10.3f}ms {r['ref_p90_ms']:>6.3f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
