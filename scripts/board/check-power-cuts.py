#!/usr/bin/env python3
"""Judges a power-cut campaign (scripts/board/power-cuts); Python standard library only.

    check-power-cuts.py OUT CUTS

OUT/boot<i>/console.log is boot i's console (board/emulated/tests/power-cut.sh), OUT/boot<i>/stick1
and stick2 the facekit/ folders of its two sticks (copied out with mtools after the boot),
OUT/boot<i>/results/cut-list.json its `sessions list --json` after its export. Cut i is boot i's;
boot i+1 shows what it left. Per cut:

  - no session lost: every session boot i had (but those it deleted, exported and checked by the
    boot before), and the one it started, is in boot i+1's store, stopped or interrupted, and
    verified record by record (`facekit sessions verify` rc 0) if the cut could have touched it;
  - everything exported: after boot i+1's export every session carries its exported.json;
  - nothing marked exported that is not on a stick: each marker that appeared during boot i (after
    its first export, or before its cut) names an export on that boot's stick whose files all
    match the manifest's sizes and SHA-256 and whose frame count is the session's;
  - frames lost ≤ 1 s: the session cut while recording had reached the kernel with B bytes of
    frames.log at the last progress line (every 100 ms); lost = (B - header) / record size - the
    frames recovered, plus the frames the camera delivered between that line and the kill (at the
    session's measured rate). A session stopped before the cut must keep every frame.

Prints one line per cut, then the distribution of frames lost (min/median/max, histogram) and the
phases the cuts fell in. Exit status 0 only if every cut passed.
"""
import json, os, re, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stick_exports import export_problem  # noqa: E402

HEADER = 128  # FrameLog.headerSize
LINE = re.compile(r"^\[\s*([0-9.]+)\] (.*)$")


def console(path):
    out = []
    for raw in open(path, errors="replace"):
        m = LINE.match(raw.rstrip("\n"))
        if m:
            out.append((float(m.group(1)), m.group(2)))
    return out


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def markers(lines, tag):
    """{session: marker dict or None} from the CUT-RAW / CUT-VERIFY lines."""
    out = {}
    for _, l in lines:
        if l.startswith(tag + " session="):
            f = fields(l)
            raw = l.split("marker=", 1)[1].split(" ", 1)[0] if "marker=" in l else "none"
            m = None
            if raw != "none":
                try:
                    m = json.loads(raw)
                except ValueError:
                    m = {"unreadable": raw}
            out[f["session"]] = dict(f, marker=m)
    return out


def phase_at_cut(lines):
    """The last step the console shows before the kill (all its lines were written before it)."""
    steps = [("BOARD: PHASE recording", "recording"), ("BOARD: PHASE stopping", "stopping"),
             ("event=session.stopped", "stopped"), ("BOARD: PHASE exporting", "exporting"),
             ("event=export.session", "exporting"), ("BOARD: PHASE marking", "marking"),
             ("event=export.done", "after-marking"), ("event=export.failed", "export-failed")]
    last = "before-recording"
    for _, l in lines:
        for key, name in steps:
            if key in l:
                last = name
    return last


def judge(out, i, planned):
    """Cut i: (problems, frames lost or None, seconds lost or None, phase, planned)."""
    a = console(os.path.join(out, f"boot{i}", "console.log"))
    b = console(os.path.join(out, f"boot{i + 1}", "console.log"))
    problems = []
    kill = [(t, l) for t, l in a if l.startswith("HOST: power cut")]
    if not kill:
        return ["boot %d was not cut" % i], None, None, "none", planned
    t_kill = kill[0][0]
    phase = phase_at_cut(a)
    if not any(l.startswith("CUT-VERIFY: end") for _, l in b):
        return [f"boot {i + 1} did not get to its checks: " + "; ".join(l for _, l in b if "FAIL" in l)[:300]], None, None, phase, planned
    before = markers(a, "CUT-VERIFY:")          # boot i after its export
    raw_before = markers(a, "CUT-RAW:")          # boot i before its kiosk
    raw_after = markers(b, "CUT-RAW:")           # what cut i left
    after = markers(b, "CUT-VERIFY:")            # boot i+1 after its export
    listing = {s["sessionID"]: s for s in json.load(open(os.path.join(out, f"boot{i + 1}", "results", "cut-list.json")))}
    # The guest's own line names the session at once; the kiosk's log reaches the console later
    # (through tail -f) and may not have when the power goes.
    started = []
    for _, l in a:
        if "event=session.started" in l or l.startswith("BOARD: PHASE recording session="):
            sid = fields(l)["session"]
            if sid not in started:
                started.append(sid)
    deleted = {fields(l)["session"] for _, l in a if l.startswith("CUT-DELETED: ")}
    before = {k: v for k, v in before.items() if k not in deleted}
    for sid in list(before) + started:
        if sid not in listing or sid not in after:
            problems.append(f"session {sid} lost")
    for sid, v in after.items():
        # "earlier": exported and verified by an earlier boot, untouched since (power-cut.sh).
        if v.get("rc") != "0" and not (v.get("rc") == "earlier" and raw_after.get(sid, {}).get("marker")):
            problems.append(f"{sid}: sessions verify rc={v.get('rc')}")
        if v["marker"] is None:
            problems.append(f"{sid}: not exported after the stick was plugged")
        st = listing.get(sid, {}).get("state")
        if st not in ("stopped", "interrupted"):
            problems.append(f"{sid}: state {st}")
    # Markers written during boot i: by its first export (stick1) or its cycle (stick2).
    for sid, v in before.items():
        if v["marker"] is not None and (raw_before.get(sid, {}).get("marker") is None):
            why = export_problem(os.path.join(out, f"boot{i}", "stick1"), v["marker"], listing.get(sid, {}).get("frameCount"))
            if why:
                problems.append(f"{sid}: marked exported by boot {i}'s first export but {why}")
    for sid, v in raw_after.items():
        if v["marker"] is not None and before.get(sid, {}).get("marker") is None:
            why = export_problem(os.path.join(out, f"boot{i}", "stick2"), v["marker"], listing.get(sid, {}).get("frameCount"))
            if why:
                problems.append(f"{sid}: marked exported before the cut but {why}")
    for sid, v in before.items():
        if v["marker"] is not None and raw_after.get(sid, {}).get("marker") is None:
            problems.append(f"{sid}: its exported.json vanished in the cut")
    # Frames lost by the session of the cycle.
    lost = secs = None
    if started:
        sid = started[-1]
        rec = listing.get(sid, {})
        n = rec.get("frameCount", 0)
        stopped = [int(fields(l)["frames"]) for _, l in a if "event=session.stopped" in l and f"session={sid}" in l]
        if stopped:
            lost = stopped[0] - n
            secs = 0.0
        else:
            prog = [(t, int(fields(l)["bytes"])) for t, l in a if l.startswith(f"BOARD: PROGRESS session={sid} ")]
            sizes = [(int(v["bytes"]) - HEADER, int(listing[s]["frameCount"])) for s, v in after.items()
                     if s in listing and listing[s]["frameCount"] > 0 and int(v["bytes"]) > HEADER]
            # A cut in a session's first half second can leave no session with a recovered frame on
            # the card (older ones deleted): every session of the campaign has the same record size.
            rs = sizes[0][0] // sizes[0][1] if sizes else RECORD_SIZE.get("any")
            rate = n / rec["durationSeconds"] if n > 1 and rec.get("durationSeconds") else 25.0
            if prog and rs:
                t_last, bytes_last = prog[-1]
                reached = max(0, bytes_last - HEADER) // rs
                # Frames the camera delivered after the last line count only if the session was
                # still recording at the cut (a stopped one's frames.log is final).
                still = raw_after.get(sid, {}).get("state") != "stopped"
                lost = max(0, reached - n) + (round(max(0.0, t_kill - t_last) * rate) if still else 0)
                secs = lost / rate
            elif not prog:
                lost, secs = 0, 0.0  # cut before the first progress line: nothing had reached the kernel
        if lost is not None and (lost < 0 or (secs or 0) > 1.0):
            problems.append(f"{sid}: {lost} frames lost ({secs:.2f} s)")
        if lost is None:
            problems.append(f"{sid}: frames lost cannot be measured")
    hidden = [l for _, l in b if l.startswith("CUT-RAW: hidden=")]
    if hidden:
        print(f"  cut {i}: left in the store: {hidden}")
    return problems, lost, secs, phase, planned


RECORD_SIZE = {}


def campaign_record_size(out, cuts):
    """frames.log bytes per record, from any session of any boot that recovered frames."""
    for i in range(1, cuts + 1):
        try:
            b = console(os.path.join(out, f"boot{i}", "console.log"))
            listing = {s["sessionID"]: s for s in json.load(open(os.path.join(out, f"boot{i}", "results", "cut-list.json")))}
        except (OSError, ValueError):
            continue
        for s, v in markers(b, "CUT-VERIFY:").items():
            n = listing.get(s, {}).get("frameCount", 0)
            if n > 0 and "bytes" in v and int(v["bytes"]) > HEADER:
                return (int(v["bytes"]) - HEADER) // n
    return None


def main():
    out, cuts = sys.argv[1], int(sys.argv[2])
    RECORD_SIZE["any"] = campaign_record_size(out, cuts)
    losses, phases, failed = [], {}, 0
    plan = open(os.path.join(out, "plan.txt")).read().split()
    for i in range(cuts):
        try:
            problems, lost, secs, phase, planned = judge(out, i, plan[i].replace(":", "+") + " ms")
        except (OSError, ValueError, KeyError) as e:
            problems, lost, secs, phase, planned = [f"cannot judge: {e!r}"], None, None, "?", "?"
        phases[phase] = phases.get(phase, 0) + 1
        if lost is not None:
            losses.append((lost, phase, secs))
        status = "ok  " if not problems else "FAIL"
        print(f"{status} cut {i:3d}: planned {planned:16s} hit {phase:14s} frames lost {lost if lost is not None else '?'}"
              + (f" ({secs:.2f} s)" if secs is not None else "") + ("" if not problems else ": " + "; ".join(problems)))
        failed += bool(problems)
    print(f"phases hit: {dict(sorted(phases.items()))}")
    if losses:
        v = [x for x, _, _ in losses]
        t = [x for _, _, x in losses]
        print(f"frames lost over {len(v)} cuts: min {min(v)}, median {statistics.median(v):g}, max {max(v)}"
              f" (seconds: min {min(t):.2f}, median {statistics.median(t):.2f}, max {max(t):.2f})")
        rec = [x for x, p, _ in losses if p == "recording"]
        if rec:
            print(f"  cuts while recording ({len(rec)}): min {min(rec)}, median {statistics.median(rec):g}, max {max(rec)}")
        edges = [0, 1, 3, 6, 10, 15, 20, 25, 30]
        for lo, hi in zip(edges, edges[1:] + [None]):
            k = sum(1 for x in v if x >= lo and (hi is None or x < hi))
            label = f"{lo}" if hi == lo + 1 else (f"{lo}-{hi - 1}" if hi else f"≥{lo}")
            print(f"  {label:>6} frames: {k:3d} {'#' * k}")
    print(f"{cuts - failed} of {cuts} cuts passed")
    return 1 if failed or not cuts else 0


if __name__ == "__main__":
    sys.exit(main())
