"""A real LSL peer for `facekit process --lsl` (scripts/tests/32-lsl.sh runs it on loopback in a
private network namespace):

    lsl_peer.py FACEKIT MEDIA WORK README --library LIBLSL

1. pylsl's lsl_local_clock() is CLOCK_MONOTONIC (each reading between two monotonic ones).
2. A pylsl markers outlet `stim` is up; facekit replays MEDIA with --lsl and --lsl-markers-from
   stim. Once facekit's inlet is connected, 100 markers are pushed with pylsl timestamps.
3. pylsl inlets receive the face stream and facekit's markers stream.
4. After the replay: the face stream's header (74 channels, labels = the export's column names
   and the README's channel table, units, can_drop_samples, source_id, rate), >= 99.9 % of the
   exported frames received, each sample's timestamp within 1 ms of the exported frame with the
   same values; the 100 markers are session events in order, each within 1 ms of the sender's
   timestamp, with the clock mapping's uncertainty; session.start/stop on facekit's markers.
5. Negative controls: the same comparisons fail for timestamps 2 ms off and for a lost marker.
Prints the figures; exits non-zero on the first failed check.
"""
import argparse, csv, glob, json, os, socket, subprocess, sys, time
import xml.etree.ElementTree as ET
import pylsl

FAILED = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILED.append(what)


def clock_is_monotonic():
    worst = 0.0
    for _ in range(2000):
        before = time.clock_gettime(time.CLOCK_MONOTONIC)
        lsl = pylsl.local_clock()
        after = time.clock_gettime(time.CLOCK_MONOTONIC)
        worst = max(worst, before - lsl, lsl - after)
    check(worst <= 1e-6, f"lsl_local_clock within CLOCK_MONOTONIC readings around it (worst excess {worst * 1e6:.3f} us)")


def match_frames(samples, frames, tol):
    """For each received (ts, values), the exported frame with the nearest time; returns the
    worst |dt| and the problems (a sample without a frame within tol, a frame matched twice,
    values that differ)."""
    problems, used, worst = [], set(), 0.0
    times = [f["mono"] for f in frames]
    j = 0
    for ts, values in samples:
        while j + 1 < len(times) and abs(times[j + 1] - ts) <= abs(times[j] - ts):
            j += 1
        dt = abs(times[j] - ts)
        worst = max(worst, dt)
        if dt > tol:
            problems.append(f"sample at {ts:.6f} has no frame within {tol * 1e3:.1f} ms (nearest {dt * 1e3:.3f} ms)")
            continue
        if j in used:
            problems.append(f"frame {j} received twice")
        used.add(j)
        f = frames[j]
        for k, want in enumerate(f["values"]):
            got = values[k]
            if want != want:  # NaN in the export
                if got == got: problems.append(f"frame {j} channel {k}: {got} but the export has NaN")
            elif abs(got - want) > 1e-6 * max(1.0, abs(want)):
                problems.append(f"frame {j} channel {k}: {got} != {want}")
        if len(problems) > 20:
            break
    return worst, problems, len(used)


def match_markers(sent, events, tol):
    """sent: [(label, ts)]; events: [(label, mono, source)]; returns worst |dt| and problems."""
    problems, worst = [], 0.0
    if [e[0] for e in events] != [s[0] for s in sent]:
        problems.append(f"labels differ: got {len(events)} events, first {[e[0] for e in events][:3]}")
        return worst, problems
    for (label, ts), (_, mono, source) in zip(sent, events):
        dt = abs(mono - ts)
        worst = max(worst, dt)
        if dt > tol:
            problems.append(f"{label}: event at {mono:.6f}, sent {ts:.6f} ({dt * 1e3:.3f} ms)")
    return worst, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("facekit"); ap.add_argument("media"); ap.add_argument("work"); ap.add_argument("readme")
    ap.add_argument("--library", required=True)
    a = ap.parse_args()
    print(f"pylsl {pylsl.__version__}, liblsl {pylsl.library_version()}")
    clock_is_monotonic()

    stim = pylsl.StreamOutlet(pylsl.StreamInfo("stim", "Markers", 1, 0, "string", "stim-pc-1"))
    out, store = os.path.join(a.work, "out"), os.path.join(a.work, "store")
    cmd = [a.facekit, "process", a.media, "--out", out, "--store", store, "--participant", "LSL", "--format", "csv",
           "--lsl", "--lsl-wait", "60", "--lsl-library", a.library, "--lsl-markers-from", "stim"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(os.path.join(a.work, "facekit.err"), "w"), text=True)
    try:
        face_info = pylsl.resolve_byprop("name", "facekit", 1, 60)
        mark_info = pylsl.resolve_byprop("name", "facekit-markers", 1, 60)
        if not face_info or not mark_info:
            check(False, "facekit's streams resolved"); return
        check(stim.wait_for_consumers(60), "facekit's marker inlet connected to stim")
        sent = []
        for i in range(100):
            ts = pylsl.local_clock()
            stim.push_sample([f"stim-{i:03d}"], ts)
            sent.append((f"stim-{i:03d}", ts))
            time.sleep(0.002)
        marks_in = pylsl.StreamInlet(mark_info[0], recover=False)
        marks_in.open_stream(10)
        face_in = pylsl.StreamInlet(face_info[0], max_buflen=360, recover=False)
        full = face_in.info(10)
        face_in.open_stream(10)
        samples, marks, quiet_since = [], [], None
        face_open, marks_open = True, True
        # Until facekit has exited and nothing came for 2 s; an inlet whose outlet is gone
        # (LostError once its queue is empty) is done.
        while face_open or marks_open:
            chunk = []
            if face_open:
                try:
                    chunk, stamps = face_in.pull_chunk(timeout=0.2, max_samples=512)
                    samples += list(zip(stamps, chunk))
                except pylsl.util.LostError:
                    face_open = False
            while marks_open:
                try:
                    m, mts = marks_in.pull_sample(timeout=0.0)
                except pylsl.util.LostError:
                    marks_open = False; break
                if m is None: break
                marks.append((m[0], mts))
            if proc.poll() is None:
                continue
            if chunk:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > 2:
                break
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    print(open(os.path.join(a.work, "facekit.err")).read().strip())
    print(stdout.strip())
    check(proc.returncode == 0, f"facekit process exited 0 (got {proc.returncode})")
    sid = next(l.split()[1] for l in stdout.splitlines() if l.startswith("session "))
    meta = json.load(open(os.path.join(store, sid, "session.json")))
    real0, mono0 = meta["realtimeAnchorNs"], meta["monotonicAnchorNs"]
    to_mono = lambda epoch: epoch - real0 / 1e9 + mono0 / 1e9
    exp = glob.glob(os.path.join(out, "session_LSL_*"))[0]
    session = json.load(open(os.path.join(exp, "session.json")))

    # The header.
    root = ET.fromstring(full.as_xml())
    labels = [c.findtext("label") for c in root.iter("channel")]
    units = [c.findtext("unit") for c in root.iter("channel")]
    mcols = session["metadataColumns"]
    want = session["blendShapeNames"] + mcols[-14:] + ["headPose.pitch", "headPose.yaw", "headPose.roll",
            "lookAtPoint.x", "lookAtPoint.y", "lookAtPoint.z", "distanceToScreen", "faceTracked"]
    check(full.channel_count() == 74 and full.channel_format() == pylsl.cf_float32, f"74 float32 channels (got {full.channel_count()})")
    check(labels == want, "channel labels = the export's column names, in the documented order")
    readme = open(a.readme).read()
    undocumented = [l for l in want[52:] if f"`{l}`" not in readme]
    check(not undocumented, f"every non-blend-shape channel is in the README's channel table (missing {undocumented})")
    check(units[:52] == ["normalized"] * 52 and units[66:69] == ["rad"] * 3, "units: blend shapes normalized, head pose rad")
    check(root.findtext("desc/synchronization/can_drop_samples") == "true", "desc/synchronization/can_drop_samples = true")
    check(full.source_id() == f"{socket.gethostname()}/file:{os.path.basename(a.media)}", f"source_id {full.source_id()!r} = hostname/camera")
    check(full.type() == "Face", "type Face")

    # The samples against the export.
    rows = list(csv.DictReader(open(os.path.join(exp, "metadata.csv"))))
    blend = list(csv.DictReader(open(os.path.join(exp, "blendshapes.csv"))))
    num = lambda s: float("nan") if s in ("", "nan", "NaN") else float(s)
    frames = []
    for r, b in zip(rows, blend):
        v = [num(b[n]) for n in session["blendShapeNames"]] + [num(r[n]) for n in want[52:73]]
        v.append(1.0 if r["isFaceTracked"] == "true" else 0.0)
        frames.append({"mono": to_mono(float(r["timestamp"])), "values": v})
    span = frames[-1]["mono"] - frames[0]["mono"]
    rate = (len(frames) - 1) / span
    check(abs(full.nominal_srate() - rate) <= 0.01 * rate, f"nominal rate {full.nominal_srate():.3f} Hz = the media's {rate:.3f} fps")
    share = len(samples) / len(frames)
    check(share >= 0.999, f"received {len(samples)} of {len(frames)} frames ({100 * share:.2f} %, need >= 99.9 %)")
    worst, problems, matched = match_frames(samples, frames, 1e-3)
    check(not problems and matched == len(samples), f"every sample = the exported frame at its time: worst |dt| {worst * 1e6:.1f} us, values equal"
          + ("" if not problems else f"; {problems[:3]}"))
    _, bad, _ = match_frames([(ts + 0.002, v) for ts, v in samples], frames, 1e-3)
    check(bool(bad), "negative control: samples 2 ms late are refused")

    # The stimulus markers as session events.
    events = json.load(open(os.path.join(exp, "events.json")))
    lsl_events = [(e["label"], e["monotonicNs"] / 1e9, e["source"]) for e in events if e["source"].startswith("lsl:")]
    worst_m, mp = match_markers(sent, lsl_events, 1e-3)
    check(not mp, f"100 stim markers are session events in order: worst |dt| {worst_m * 1e6:.1f} us" + ("" if not mp else f"; {mp[:3]}"))
    check(all(e[2].startswith("lsl:u=") and e[2].endswith("us") for e in lsl_events), f"each carries the mapping's uncertainty ({lsl_events[0][2] if lsl_events else '-'})")
    check(all(abs(e["timestamp"] - (real0 / 1e9 + (e["monotonicNs"] - mono0) / 1e9)) < 1e-5 for e in events), "events.json timestamps agree with monotonicNs")
    _, bad = match_markers(sent[:50] + sent[51:], lsl_events, 1e-3)
    check(bool(bad), "negative control: a lost marker is noticed")
    _, bad = match_markers(sent, [(l, m + 0.002, s) for l, m, s in lsl_events], 1e-3)
    check(bool(bad), "negative control: markers 2 ms off are refused")

    # facekit's own markers.
    labels_m = [m[0] for m in marks]
    check(labels_m[:1] == ["session.start LSL"] and labels_m[-1:] == ["session.stop"], f"facekit's markers: {labels_m}")
    if marks:
        start = marks[0][1]
        check(start - 1e-3 <= frames[0]["mono"] < start + 1.0, f"session.start stamped at the replay's start ({(frames[0]['mono'] - start) * 1e3:.1f} ms before frame 0)")
    print(f"{len(FAILED)} checks failed" if FAILED else "all LSL checks passed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
