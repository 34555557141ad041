"""The live face JSON stream of `facekit process --json-stream` against the session's export and
the seed's format (face-capture-json-format.md):

    check_json_stream.py STREAM.jsonl EXPORT_DIR [--joined-late]

With --joined-late (a socket client that connected during the replay) the lines must be the
export's last frames, from the frame of the first line's timestamp on.

Every frame has one line; each line has exactly the seed's keys (faces[].detected, blendshapes,
rotation{pitch,yaw,roll}, translation{x,y,z}, faceState; timestamp as a string of milliseconds);
timestamps are the exported frame times in Unix ms; blend shapes and rotation (degrees) equal the
export's; faceState 0 exactly on the frames with a tracked face; translation in 0-1. A negative
control checks that a line with a wrong value is caught. Exits non-zero on failure.
"""
import csv, json, math, os, sys

FACE_KEYS = {"detected", "blendshapes", "rotation", "translation", "faceState"}


def problems_of(lines, rows, blend, names):
    out = []
    if len(lines) != len(rows):
        out.append(f"{len(lines)} lines for {len(rows)} frames")
    for k, (line, r, b) in enumerate(zip(lines, rows, blend)):
        d = json.loads(line)
        if set(d) != {"faces", "timestamp"} or not isinstance(d["timestamp"], str) or not d["timestamp"].isdigit():
            out.append(f"line {k}: top level {sorted(d)} / timestamp {d.get('timestamp')!r}"); continue
        if abs(int(d["timestamp"]) - float(r["timestamp"]) * 1000) > 1.0:
            out.append(f"line {k}: timestamp {d['timestamp']} vs exported {r['timestamp']}")
        f = d["faces"][0]
        if set(f) != FACE_KEYS or set(f["rotation"]) != {"pitch", "yaw", "roll"} or set(f["translation"]) != {"x", "y", "z"}:
            out.append(f"line {k}: face keys {sorted(f)}"); continue
        if not all(0 <= f["translation"][a] <= 1 for a in "xyz"):
            out.append(f"line {k}: translation outside 0-1: {f['translation']}")
        tracked = r["isFaceTracked"] == "true"
        if (f["faceState"] == 0) != tracked or f["faceState"] not in (0, 1, 2):
            out.append(f"line {k}: faceState {f['faceState']} with isFaceTracked {r['isFaceTracked']}")
        if not tracked:
            if f["detected"] != 0 or f["blendshapes"]:
                out.append(f"line {k}: no face but detected {f['detected']}, {len(f['blendshapes'])} blend shapes")
            continue
        if not set(f["blendshapes"]) <= set(names):
            out.append(f"line {k}: unknown blend shapes {sorted(set(f['blendshapes']) - set(names))[:3]}")
        for n in names:
            want = b[n]
            if want in ("", "nan", "NaN"):
                if n in f["blendshapes"]: out.append(f"line {k}: {n} written but not measured")
            elif n not in f["blendshapes"] or abs(f["blendshapes"][n] - float(want)) > 5.1e-5:
                out.append(f"line {k}: {n} {f['blendshapes'].get(n)} vs exported {want}")
        for a in ("pitch", "yaw", "roll"):
            want = math.degrees(float(r[f"headPose.{a}"]))
            if abs(f["rotation"][a] - want) > 0.0051:
                out.append(f"line {k}: rotation.{a} {f['rotation'][a]} vs exported {want:.4f} deg")
        if len(out) > 20:
            break
    return out


def main():
    stream, export = sys.argv[1], sys.argv[2]
    lines = [l for l in open(stream).read().split("\n") if l]
    rows = list(csv.DictReader(open(os.path.join(export, "metadata.csv"))))
    blend = list(csv.DictReader(open(os.path.join(export, "blendshapes.csv"))))
    if "--joined-late" in sys.argv[3:] and lines:
        first = int(json.loads(lines[0])["timestamp"])
        k = min(range(len(rows)), key=lambda i: abs(float(rows[i]["timestamp"]) * 1000 - first))
        print(f"client joined at frame {k}")
        rows, blend = rows[k:], blend[k:]
    names = json.load(open(os.path.join(export, "session.json")))["blendShapeNames"]
    p = problems_of(lines, rows, blend, names)
    states = [json.loads(l)["faces"][0]["faceState"] for l in lines]
    print(f"{len(lines)} lines for {len(rows)} frames; faceState 0/1/2: {states.count(0)}/{states.count(1)}/{states.count(2)}")
    for x in p[:10]:
        print("FAIL " + x)
    # Negative control: one blend shape off by 0.01 must be reported.
    k = next(i for i, r in enumerate(rows) if r["isFaceTracked"] == "true")
    d = json.loads(lines[k]); n = next(iter(d["faces"][0]["blendshapes"]))
    d["faces"][0]["blendshapes"][n] += 0.01
    bad = lines[:k] + [json.dumps(d)] + lines[k + 1:]
    caught = any(n in x for x in problems_of(bad, rows, blend, names))
    print(("ok   " if caught else "FAIL ") + "negative control: a blend shape 0.01 off is caught")
    sys.exit(0 if not p and caught else 1)


if __name__ == "__main__":
    main()
