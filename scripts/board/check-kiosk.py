#!/usr/bin/env python3
"""Host-side checks of the kiosk's USB-stick exports (scripts/tests/45-kiosk-board.sh).

    check-kiosk.py first|recovered STICKDIR CONSOLE_LOG
    check-kiosk.py wiped STICK_IMAGE CONSOLE_LOG

STICKDIR is the stick's facekit/ folder copied out with mtools. Every export directory must match
its manifest (sizes and SHA-256, recomputed here) and hold a session.h5 that h5py and pandas read
with the seed's datasets and `columns` attributes. `first` (after boot 1): the two kiosk sessions
and the pre-recorded bulk one, no partial directory left; the session with the TTL markers has
exactly three `stimulus` markers, in time order, inside the session, and each at the epoch time
of the kernel edge timestamp the daemon logged. `recovered` (after boot 2): exactly one session,
state interrupted, with frames. `wiped`: the image whose partition the guest zeroed is still
zeroed (the refused stick was not formatted).
"""
import hashlib, json, os, re, sys

import h5py
import numpy as np
import pandas as pd

failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def columns(ds):
    """A dataset's `columns` attribute: one comma-separated string (the seed's) or a list."""
    c = ds.attrs["columns"]
    if isinstance(c, bytes):
        c = c.decode()
    if isinstance(c, str):
        return c.split(",")
    return [x.decode() if isinstance(x, bytes) else x for x in c]


def read_export(d):
    man = json.load(open(os.path.join(d, "manifest.json")))
    for f in man["files"]:
        p = os.path.join(d, f["path"])
        data = open(p, "rb").read() if os.path.exists(p) else b""
        check(len(data) == f["size"] and hashlib.sha256(data).hexdigest() == f["sha256"],
              f"{os.path.basename(d)}/{f['path']}: size and SHA-256 match the manifest")
    info = json.load(open(os.path.join(d, "session.json")))
    h = h5py.File(os.path.join(d, "session.h5"), "r")
    for name in ("blendshapes", "metadata", "timestamps", "frame_indices"):
        check(name in h, f"{os.path.basename(d)}: /{name} present")
    bs = pd.DataFrame(h["blendshapes"][()], columns=columns(h["blendshapes"]))
    md_cols = columns(h["metadata"])
    ts = np.asarray(h["timestamps"][()], dtype=float).ravel()
    check(len(bs) == man["frameCount"] == len(ts) == info["frameCount"],
          f"{os.path.basename(d)}: {len(bs)} frames in /blendshapes, /timestamps, manifest and session.json")
    check(len(bs.columns) == 52 and "jawOpen" in bs.columns, f"{os.path.basename(d)}: 52 blend-shape columns")
    check(len(md_cols) > 5, f"{os.path.basename(d)}: metadata columns {md_cols[:6]}…")
    check(bool(np.all(np.diff(ts) > 0)), f"{os.path.basename(d)}: timestamps strictly increasing")
    events = []
    if "events" in h:
        for row in h["events"][()]:
            row = row.decode() if isinstance(row, bytes) else row
            t, label, source = row.split(",", 2)
            events.append((float(t), label, source))
    return man, info, ts, events


def main():
    mode, stick, console = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "wiped":
        # The stick image whose partition the guest zeroed: facekit must have left it so.
        data = open(stick, "rb").read()
        part = data[1 << 20:(1 << 20) + (1 << 20)]
        check(len(part) == 1 << 20 and part.count(0) == len(part), "the wiped stick was not formatted (its first MiB still zero)")
        return
    names = sorted(os.listdir(stick)) if os.path.isdir(stick) else []
    print(f"stick: {names}")
    partial = [n for n in names if n.startswith(".")]
    check(not partial, f"no partial export left on the stick ({partial})")
    exports = {}
    for n in names:
        if n.startswith("."):
            continue
        man, info, ts, events = read_export(os.path.join(stick, n))
        exports[man["participant"]] = (n, man, info, ts, events)
    log = open(console, errors="replace").read()
    if mode == "first":
        check(sorted(exports) == ["P001", "P002", "bulk"], f"sessions on the stick: {sorted(exports)}")
        if "P001" not in exports:
            return
        n, man, info, ts, events = exports["P001"]
        check(man["frameCount"] > 0, f"P001 has frames ({man['frameCount']})")
        labels = [e[1] for e in events]
        check(labels == ["stimulus"] * 3, f"P001 markers: {labels}")
        times = [e[0] for e in events]
        check(times == sorted(times), "markers in time order")
        segs = info["segments"]
        check(all(any(g["start"] <= t <= g["end"] for g in segs) for t in times),
              f"markers inside the session's recording segments ({[(round(g['start'], 3), round(g['end'], 3)) for g in segs]}: {times})")
        check(all(e[2].startswith("gpio:") for e in events), f"markers come from GPIO, with their line: {[e[2] for e in events]}")
        # The kernel's edge timestamps, as the daemon logged them, mapped with the session's anchor.
        kernel = [int(x) for x in re.findall(r"event=marker session=P001\S* label=stimulus timestampNs=(\d+)", log)]
        # The session's anchors as stored on the card (the guest printed its session.json).
        meta = json.loads(re.search(r"KIOSK-SESSION: (\{.*\})", log).group(1))
        expect = [meta["realtimeAnchorNs"] / 1e9 + (k - meta["monotonicAnchorNs"]) / 1e9 for k in kernel]
        check(len(kernel) == 3 and all(abs(a - b) < 1e-5 for a, b in zip(expect, times)),
              f"marker times are the kernel edge timestamps (logged {kernel})")
        n2, man2, *_ = exports["P002"]
        check(man2["frameCount"] > 0 and man2["eventCount"] == 0, f"P002 (the bouncing press) has frames and no markers")
        check(exports["bulk"][1]["frameCount"] > 1000, f"bulk session complete ({exports['bulk'][1]['frameCount']} frames)")
    else:
        check(len(exports) == 1, f"one session on the second stick: {sorted(exports)}")
        for p, (n, man, info, ts, events) in exports.items():
            check(info["state"] == "interrupted", f"{p}: state {info['state']} (interrupted after the power cut)")
            check(man["frameCount"] > 0, f"{p}: {man['frameCount']} frames kept")


if __name__ == "__main__":
    # Every path out of main (including its early return when P001 is missing) ends here, so a
    # failed check always fails the script.
    main()
    print(f"{len(failures)} failed")
    sys.exit(1 if failures else 0)
