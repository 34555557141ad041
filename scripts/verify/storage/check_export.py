#!/usr/bin/env python3
"""Reads facekit exports with pandas and h5py and checks them against what was recorded.

The sessions come from `facekit sessions record-synthetic` (or the bench), whose frames are the
deterministic SyntheticFrames formulas; this file re-implements them with numpy float32 so every
stored value can be compared exactly (float16 landmarks after the same rounding).

usage: check_export.py EXPORT_DIR [EXPORT_DIR...] --seed S [--frames N | --min-frames N]
                       [--vertices all-f16] [--fps 30] [--images] [--events K]
Several directories of the same session (csv, jsonl, hdf5) are also cross-checked: identical
timestamps, frame indices and values in every format. Exits non-zero with a message on failure.
"""
import argparse, csv, hashlib, io, json, math, os, sys

import h5py
import numpy as np
import pandas as pd

BLEND = ["browDownLeft", "browDownRight", "browInnerUp", "browOuterUpLeft", "browOuterUpRight",
         "cheekPuff", "cheekSquintLeft", "cheekSquintRight", "eyeBlinkLeft", "eyeBlinkRight",
         "eyeLookDownLeft", "eyeLookDownRight", "eyeLookInLeft", "eyeLookInRight", "eyeLookOutLeft",
         "eyeLookOutRight", "eyeLookUpLeft", "eyeLookUpRight", "eyeSquintLeft", "eyeSquintRight",
         "eyeWideLeft", "eyeWideRight", "jawForward", "jawLeft", "jawOpen", "jawRight", "mouthClose",
         "mouthDimpleLeft", "mouthDimpleRight", "mouthFrownLeft", "mouthFrownRight", "mouthFunnel",
         "mouthLeft", "mouthLowerDownLeft", "mouthLowerDownRight", "mouthPressLeft", "mouthPressRight",
         "mouthPucker", "mouthRight", "mouthRollLower", "mouthRollUpper", "mouthShrugLower",
         "mouthShrugUpper", "mouthSmileLeft", "mouthSmileRight", "mouthStretchLeft", "mouthStretchRight",
         "mouthUpperUpLeft", "mouthUpperUpRight", "noseSneerLeft", "noseSneerRight", "tongueOut"]
AUS = ["au1", "au2", "au4", "au5", "au6", "au7", "au9", "au12", "au14", "au15", "au16", "au20", "au23", "au26"]
AU_SOURCES = [["browInnerUp"], ["browOuterUpLeft", "browOuterUpRight"], ["browDownLeft", "browDownRight"],
              ["eyeWideLeft", "eyeWideRight"], ["cheekSquintLeft", "cheekSquintRight"],
              ["eyeSquintLeft", "eyeSquintRight"], ["noseSneerLeft", "noseSneerRight"],
              ["mouthSmileLeft", "mouthSmileRight"], ["mouthDimpleLeft", "mouthDimpleRight"],
              ["mouthFrownLeft", "mouthFrownRight"], ["mouthLowerDownLeft", "mouthLowerDownRight"],
              ["mouthStretchLeft", "mouthStretchRight"], ["mouthPucker"], ["jawOpen"]]
EMOTIONS = ["happiness", "sadness", "surprise", "fear", "anger", "disgust", "contempt"]
META = (["isFaceTracked", "droppedFrames", "lookAtPoint.x", "lookAtPoint.y", "lookAtPoint.z",
         "lightEstimate.ambientIntensity", "lightEstimate.ambientColorTemperature", "distanceToScreen"]
        + ["emotion." + e for e in EMOTIONS] + ["headPose.pitch", "headPose.yaw", "headPose.roll"] + AUS)
f32 = np.float32


class CheckFailed(Exception):
    pass


def fail(msg):
    raise CheckFailed(msg)


def vertex_indices(spec):
    body = spec[:-4] if spec.endswith("-f16") or spec.endswith("-f32") else spec
    if body == "none": return []
    if body == "all": return list(range(478))
    if body.startswith("stride:"): return list(range(0, 478, int(body[7:])))
    if body.startswith("subset:"): return [int(x) for x in body[7:].split(",")]
    raise ValueError(spec)


def q(n, m):
    return (n % m).astype(f32) / f32(m)


def synthetic(seed, n, vspec):
    """Expected values for frames 0..n-1, as SyntheticFrames.fill stores them."""
    i = np.arange(n, dtype=np.int64)
    s = np.int64(seed)
    tracked = (i % 10) != 9
    blend = np.stack([q(i * 7919 + c * 104729 + s, 10007) for c in range(52)], axis=1)
    au = []
    for src in AU_SOURCES:
        cols = [blend[:, BLEND.index(b)] for b in src]
        au.append(cols[0] if len(cols) == 1 else (cols[0] + cols[1]) * f32(0.5))
    au = np.stack(au, axis=1)
    emo = np.stack([q(i * 3 + e * 13 + s, 101) for e in range(7)], axis=1)
    head = np.stack([q(i + s, 628) - f32(0.5), q(i * 2 + s, 628) - f32(0.5), q(i * 3 + s, 628) - f32(0.5)], axis=1)
    look = np.stack([q(i * 5 + s, 1000) - f32(0.5), q(i * 7 + s, 1000) - f32(0.5), q(i * 11 + s, 1000)], axis=1)
    light = np.stack([f32(1000) * q(i + s, 97), np.full(n, 6500, dtype=f32)], axis=1)
    dist = q(i + s, 50) * f32(0.1) + f32(0.3)
    meta = np.concatenate([tracked[:, None].astype(f32), np.zeros((n, 1), f32), look, light, dist[:, None], emo, head, au], axis=1)
    ix = vertex_indices(vspec)
    lm = np.zeros((n, len(ix), 3), dtype=f32)
    for k, v in enumerate(ix):
        for c in range(3):
            lm[:, k, c] = q(i * 31 + v * 17 + c * 7 + s, 1000)
    if vspec.endswith("-f16"):
        lm = lm.astype(np.float16)
    nan = ~tracked
    blend[nan] = np.nan
    meta[nan, 2:5] = np.nan   # lookAt
    meta[nan, 7:] = np.nan    # distance, emotions, head pose, AUs
    lm[nan] = np.nan
    return blend, meta, lm


def same(a, b, what):
    a = np.asarray(a); b = np.asarray(b)
    if a.shape != b.shape:
        fail(f"{what}: shape {a.shape} != expected {b.shape}")
    ok = (a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))
    if not ok.all():
        idx = np.argwhere(~ok)[0]
        fail(f"{what}: first difference at {tuple(idx)}: {a[tuple(idx)]!r} != expected {b[tuple(idx)]!r}")


def check_manifest(d):
    man = json.load(open(os.path.join(d, "manifest.json")))
    listed = {e["path"] for e in man["files"]}
    present = set()
    for root, _, files in os.walk(d):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), d)
            if rel != "manifest.json": present.add(rel)
    if listed != present:
        fail(f"{d}: manifest lists {sorted(listed ^ present)} differently from the files present")
    for e in man["files"]:
        data = open(os.path.join(d, e["path"]), "rb").read()
        if len(data) != e["size"] or hashlib.sha256(data).hexdigest() != e["sha256"]:
            fail(f"{d}/{e['path']}: size or SHA-256 differs from the manifest")
    return man


def read_tables(d, fmt):
    """pandas DataFrames for blendshapes, metadata, landmarks (None if absent)."""
    def read(name):
        p = os.path.join(d, f"{name}.{fmt}")
        if not os.path.exists(p): return None
        if fmt == "csv":
            return pd.read_csv(p, float_precision="round_trip")
        return pd.read_json(p, lines=True, precise_float=True, dtype=False, convert_dates=False, keep_default_dates=False)
    return read("blendshapes"), read("metadata"), read("landmarks")


def main(argv=None, quiet=False):
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--frames", type=int)
    ap.add_argument("--min-frames", type=int, default=0)
    ap.add_argument("--vertices", default="all-f16")
    ap.add_argument("--fps", type=float, default=30)
    ap.add_argument("--images", action="store_true")
    ap.add_argument("--events", type=int)
    a = ap.parse_args(argv)
    period = round(1e9 / a.fps) / 1e9
    seen = {}
    for d in a.dirs:
        man = check_manifest(d)
        info = json.load(open(os.path.join(d, "session.json")))
        n = man["frameCount"]
        if a.frames is not None and n != a.frames: fail(f"{d}: {n} frames, expected {a.frames}")
        if n < a.min_frames: fail(f"{d}: {n} frames, expected at least {a.min_frames}")
        if info["blendShapeNames"] != BLEND or info["metadataColumns"] != META: fail(f"{d}: session.json column lists differ")
        blend_x, meta_x, lm_x = synthetic(a.seed, n, a.vertices)
        ix = vertex_indices(a.vertices)
        fmt = man["format"]
        if fmt in ("csv", "jsonl"):
            b, m, lm = read_tables(d, fmt)
            if list(b.columns) != ["timestamp", "frameIndex"] + BLEND: fail(f"{d}: blendshapes columns {list(b.columns)[:5]}...")
            if list(m.columns) != ["timestamp", "frameIndex"] + META: fail(f"{d}: metadata columns differ")
            if len(b) != n or len(m) != n: fail(f"{d}: {len(b)} / {len(m)} rows, expected {n}")
            ts = b["timestamp"].to_numpy(np.float64)
            fi = b["frameIndex"].to_numpy()
            same(b[BLEND].to_numpy(np.float64).astype(f32), blend_x, f"{d} blendshapes")
            mv = m[META].copy()
            mv["isFaceTracked"] = mv["isFaceTracked"].astype(bool).astype(np.float32)
            same(mv.to_numpy(np.float64).astype(f32), meta_x, f"{d} metadata")
            same(m["timestamp"].to_numpy(np.float64), ts, f"{d} metadata timestamps")
            if ix:
                cols = [f"v{v}.{c}" for v in ix for c in "xyz"]
                if lm is None or list(lm.columns) != ["timestamp", "frameIndex"] + cols: fail(f"{d}: landmarks columns differ")
                got = lm[cols].to_numpy(np.float64).astype(f32).reshape(n, len(ix), 3)
                same(got, lm_x.astype(f32), f"{d} landmarks")
            elif lm is not None:
                fail(f"{d}: landmarks file present although vertices are none")
            ev_path = os.path.join(d, "events.json")
            events = json.load(open(ev_path)) if os.path.exists(ev_path) else []
            ev = [(e["timestamp"], e["label"], e["source"]) for e in events]
            images = sorted(os.listdir(os.path.join(d, "images"))) if os.path.isdir(os.path.join(d, "images")) else []
            img_bytes = [open(os.path.join(d, "images", x), "rb").read() for x in images]
            img_idx = [int(x[6:-4]) for x in images]
        elif fmt == "hdf5":
            with h5py.File(os.path.join(d, "session.h5"), "r") as f:
                cols = lambda name: f[name].attrs["columns"].decode().split(",")  # the seed's idiom
                if cols("blendshapes") != BLEND or cols("metadata") != META: fail(f"{d}: columns attributes differ")
                if cols("timestamps") != ["timestamp"] or cols("frame_indices") != ["frameIndex"]: fail(f"{d}: columns attrs")
                for name, shape, dt in [("blendshapes", (n, 52), "float32"), ("metadata", (n, len(META)), "float32"),
                                        ("timestamps", (n,), "float64"), ("frame_indices", (n,), "int32")]:
                    if f[name].shape != shape or str(f[name].dtype) != dt: fail(f"{d}: /{name} is {f[name].shape} {f[name].dtype}")
                if n > 0 and f["blendshapes"].compression != "gzip": fail(f"{d}: /blendshapes not deflate-compressed")
                ts = f["timestamps"][:]; fi = f["frame_indices"][:]
                same(f["blendshapes"][:], blend_x, f"{d} /blendshapes")
                same(f["metadata"][:], meta_x, f"{d} /metadata")
                if ix:
                    want_dt = "float16" if a.vertices.endswith("-f16") else "float32"
                    if str(f["landmarks"].dtype) != want_dt or list(f["landmarks"].attrs["vertex_indices"]) != ix:
                        fail(f"{d}: /landmarks dtype {f['landmarks'].dtype} or vertex_indices wrong")
                    same(f["landmarks"][:], lm_x, f"{d} /landmarks")
                elif "landmarks" in f:
                    fail(f"{d}: /landmarks present although vertices are none")
                ev = []
                if "events" in f:
                    if cols("events") != ["timestamp", "label", "source"]: fail(f"{d}: /events columns")
                    for row in f["events"].asstr()[:]:
                        t, label, source = next(csv.reader(io.StringIO(row)))
                        ev.append((float(t), label, source))
                img_bytes, img_idx = [], []
                if "images" in f:
                    img_bytes = [bytes(x) for x in f["images"][:]]
                    img_idx = list(f["image_frame_indices"][:])
        else:
            fail(f"{d}: unknown format {fmt}")
        if list(fi) != list(range(n)): fail(f"{d}: frame indices are not 0..{n - 1}")
        if n > 1:
            steps = np.diff(ts)
            if np.abs(steps - period).max() > 1e-6: fail(f"{d}: timestamp steps deviate from 1/fps by {np.abs(steps - period).max()}")
        if n > 0 and not (info["startTimestamp"] - 1 <= ts[0] <= info["startTimestamp"] + 60):
            fail(f"{d}: first timestamp {ts[0]} is far from the session start {info['startTimestamp']}")
        if a.events is not None and len(ev) != a.events: fail(f"{d}: {len(ev)} events, expected {a.events}")
        for t, _, _ in ev:
            if n > 0 and not (ts[0] - 1e-6 <= t <= ts[-1] + 1e-6): fail(f"{d}: event at {t} outside the frames")
        if a.images:
            if not img_idx: fail(f"{d}: no images exported")
            for b_ in img_bytes:
                if b_[:3] != b"\xff\xd8\xff": fail(f"{d}: an image is not a JPEG")
        seen[d] = (fmt, ts, np.asarray(fi), ev, img_bytes)
        if not quiet: print(f"check_export: ok {d} ({fmt}, {n} frames, {len(ev)} events, {len(img_bytes)} images)")
    # Cross-format: identical timestamps (bit for bit), indices, events and images.
    items = list(seen.items())
    for d, (fmt, ts, fi, ev, imgs) in items[1:]:
        d0, (fmt0, ts0, fi0, ev0, imgs0) = items[0]
        if len(ts) != len(ts0) or not np.array_equal(ts, ts0) or not np.array_equal(fi, fi0):
            fail(f"{fmt} and {fmt0} exports disagree on timestamps or frame indices")
        if ev != ev0: fail(f"{fmt} and {fmt0} exports disagree on events: {ev} vs {ev0}")
        if imgs != imgs0: fail(f"{fmt} and {fmt0} exports disagree on images")


if __name__ == "__main__":
    try:
        main()
    except CheckFailed as e:
        print("check_export: FAIL: " + str(e), file=sys.stderr)
        sys.exit(1)
