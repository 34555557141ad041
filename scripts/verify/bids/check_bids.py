"""Checks a facekit BIDS dataset against the BIDS validator and against the seed CSV exports.

usage: check_bids.py DATASET VALIDATOR_JSON SEED_EXPORT_DIR...

VALIDATOR_JSON is bids-validator-deno's `--format json` output for DATASET: it must list no
issue of severity "error". Then every session in DATASET is read as a researcher's code would
(pandas, gzip) and compared with the same session's seed CSV export (blendshapes.csv,
metadata.csv, events.json): one physio row per stored record with the seed's timestamps (no
resampling), the same values, the markers as events, head pose in the motion file, and every
file of the session listed in its manifest with its SHA-256. Prints one line per check; exits
1 on the first failure ("FAIL ...").
"""
import glob
import gzip
import hashlib
import json
import os
import sys

import numpy as np
import pandas as pd


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def ok(msg):
    print("ok   " + msg)


def main():
    ds, report, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(report) as f:
        issues = json.load(f)["issues"]["issues"]
    errors = [i for i in issues if i.get("severity") == "error"]
    if errors:
        for e in errors[:10]:
            print("  ", e.get("code"), e.get("location"), e.get("issueMessage", "")[:120])
        fail(f"validator: {len(errors)} errors")
    ok(f"validator: 0 errors ({len(issues)} warnings)")

    by_session = {}
    for seed in seeds:
        info = json.load(open(os.path.join(seed, "session.json")))
        by_session[info["sessionID"]] = (seed, info)

    manifests = glob.glob(os.path.join(ds, "sourcedata/facekit/sub-*/ses-*/manifest.json"))
    if len(manifests) != len(seeds):
        fail(f"{len(manifests)} sessions in the dataset, {len(seeds)} exported as CSV")
    participants = pd.read_csv(os.path.join(ds, "participants.tsv"), sep="\t", dtype=str)
    for mpath in sorted(manifests):
        m = json.load(open(mpath))
        sid = m["sessionID"]
        if sid not in by_session:
            fail(f"{mpath}: session {sid} has no CSV export to compare with")
        seed, info = by_session[sid]
        rel = os.path.relpath(os.path.dirname(mpath), os.path.join(ds, "sourcedata/facekit"))
        sub, ses = rel.split("/")
        row = participants[participants.participant_id == sub]
        if len(row) != 1 or row.facekit_participant.iloc[0] != info["participant"]:
            fail(f"participants.tsv: {sub} is not participant {info['participant']!r}")
        # Every file of the session's directories is in the manifest, with its SHA-256.
        listed = {f["path"]: f for f in m["files"]}
        on_disk = set()
        for root in (os.path.join(ds, sub, ses), os.path.dirname(mpath)):
            for d, _, names in os.walk(root):
                on_disk |= {os.path.relpath(os.path.join(d, n), ds) for n in names}
        on_disk.discard(os.path.relpath(mpath, ds))
        if on_disk != set(listed):
            fail(f"{sid}: manifest lists {sorted(set(listed) ^ on_disk)} differently from the disk")
        for p, f in listed.items():
            data = open(os.path.join(ds, p), "rb").read()
            if len(data) != f["size"] or hashlib.sha256(data).hexdigest() != f["sha256"]:
                fail(f"{p}: size or SHA-256 differs from the manifest")
        stem = f"{sub}_{ses}"
        beh = os.path.join(ds, sub, ses, "beh")
        side = json.load(open(os.path.join(beh, f"{stem}_task-facekit_recording-face_physio.json")))
        with gzip.open(os.path.join(beh, f"{stem}_task-facekit_recording-face_physio.tsv.gz"), "rt") as g:
            physio = pd.read_csv(g, sep="\t", header=None, names=side["Columns"], na_values="n/a", keep_default_na=False)
        blend = pd.read_csv(os.path.join(seed, "blendshapes.csv"))
        meta = pd.read_csv(os.path.join(seed, "metadata.csv"))
        if len(physio) != len(blend):
            fail(f"{sid}: {len(physio)} physio rows, {len(blend)} rows in blendshapes.csv")
        start = info["startTimestamp"]
        t = blend.timestamp.to_numpy() - start
        if not np.allclose(physio.timestamp.to_numpy(), t, atol=2e-6):
            fail(f"{sid}: physio timestamps are not the frames' times from the session start")
        if abs(side["StartTime"] - t[0]) > 2e-6:
            fail(f"{sid}: StartTime {side['StartTime']} is not the first frame's time {t[0]}")
        if not (physio.frame_index.to_numpy() == blend.frameIndex.to_numpy()).all():
            fail(f"{sid}: frame_index differs from the seed's frameIndex")
        for col in ["jawOpen", "eyeBlinkLeft", "headPose.yaw", "emotion.happy" if "emotion.happy" in meta else "headPose.pitch"]:
            ours = physio[col].to_numpy(dtype=np.float64)
            theirs = (blend[col] if col in blend else meta[col]).to_numpy(dtype=np.float64)
            if not np.array_equal(np.isnan(ours), np.isnan(theirs)) or not np.allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)], rtol=0, atol=0):
                fail(f"{sid}: physio {col} differs from the seed CSV")
        tracked = meta.isFaceTracked.astype(str).str.lower() == "true"
        if not ((physio.face_id.to_numpy() >= 0) == tracked.to_numpy()).all():
            fail(f"{sid}: face_id is not -1 exactly where no face was tracked")
        ok(f"{sid} -> {sub}/{ses}: {len(physio)} physio rows = seed rows, timestamps and values equal, manifest complete")

        ev = pd.read_csv(os.path.join(beh, f"{stem}_task-facekit_events.tsv"), sep="\t", na_values="n/a", keep_default_na=False)
        seed_events = json.load(open(os.path.join(seed, "events.json"))) if os.path.exists(os.path.join(seed, "events.json")) else []
        if len(ev) != len(seed_events):
            fail(f"{sid}: {len(ev)} events, {len(seed_events)} in events.json")
        for (_, r), e in zip(ev.iterrows(), sorted(seed_events, key=lambda e: e["monotonicNs"])):
            if r.trial_type != e["label"] or abs(r.onset - (e["timestamp"] - start)) > 2e-6 or r.duration != 0:
                fail(f"{sid}: event {r.to_dict()} is not {e}")
        ok(f"{sid}: {len(ev)} events, onsets from the session start, trial_type = label")

        motion = sorted(glob.glob(os.path.join(ds, sub, ses, "motion", "*_motion.tsv")))
        rows = 0
        for mt in motion:
            mo = pd.read_csv(mt, sep="\t", header=None, na_values="n/a", keep_default_na=False)
            ch = pd.read_csv(mt.replace("_motion.tsv", "_channels.tsv"), sep="\t")
            if list(ch.type) != ["LATENCY", "ORNT", "ORNT", "ORNT"] or mo.shape[1] != len(ch):
                fail(f"{mt}: channels {list(ch.type)} do not describe its {mo.shape[1]} columns")
            rows += len(mo)
        if rows != int(tracked.sum()):
            fail(f"{sid}: {rows} motion rows, {int(tracked.sum())} tracked frames")
        ok(f"{sid}: {len(motion)} motion file(s), {rows} rows = tracked frames")
    print("all checks passed")


if __name__ == "__main__":
    main()
