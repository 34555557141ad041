#!/usr/bin/env python3
"""kill -9 a recording at random moments, then reopen, list and export every session.

usage: crash_trials.py FACEKIT WORKDIR [--trials 50] [--seed 2026]

Each trial starts `facekit sessions record-synthetic --report-flushes` (paced, random vertex mode,
flush cadence and image capture), reads the "durable N" lines it prints after every fsync, sends
SIGKILL after a random delay, then checks that:
  * `facekit sessions list` opens the store (exit 0), the session is `interrupted`, and it holds at
    least the N frames of the last completed flush (nothing flushed is lost);
  * the session exports to CSV and HDF5, and pandas/h5py read back exactly the synthetic values.
The random choices come from --seed, so a failing trial can be replayed.
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_export  # noqa: E402

MODES = ["none", "all-f16", "all", "stride:4-f16", "subset:1,33,133,263,362,468"]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("facekit")
    ap.add_argument("workdir")
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    failures = []
    stats = {"killed_before_session": 0, "frames_total": 0, "lost_nothing": 0}
    for t in range(a.trials):
        store = os.path.join(a.workdir, f"trial{t:03d}", "store")
        out = os.path.join(a.workdir, f"trial{t:03d}", "out")
        os.makedirs(out, exist_ok=True)
        mode = rng.choice(MODES)
        flush_ms = rng.choice([10, 50, 200, 1000])
        images = rng.choice([0, 0, 7, 30])
        delay = rng.uniform(0.0, 2.5)
        seed = rng.randrange(1, 1 << 30)
        cmd = [a.facekit, "sessions", "record-synthetic", "--store", store, "--participant", f"K{t}",
               "--frames", "1000000", "--speed", "8", "--seed", str(seed), "--vertices", mode,
               "--flush-ms", str(flush_ms), "--images-every", str(images), "--events", "100000", "--report-flushes"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, "")), daemon=True)
        reader.start()
        time.sleep(delay)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        reader.join(5)
        durable = max([int(l.split()[1]) for l in lines if l.startswith("durable ")] or [0])
        started = any(l.startswith("session ") for l in lines)
        label = f"trial {t} (mode {mode}, flush {flush_ms} ms, images {images}, kill after {delay:.2f}s, durable {durable})"
        try:
            if not started and not os.path.isdir(store):
                # Killed before record-synthetic created the store; `sessions list` never creates
                # one (it would say there is no store), so there is nothing to check.
                stats["killed_before_session"] += 1
                continue
            r = run([a.facekit, "sessions", "list", "--store", store, "--json"])
            if r.returncode != 0:
                raise check_export.CheckFailed(f"sessions list failed: {r.stdout} {r.stderr}")
            sessions = json.loads(r.stdout)
            if not started:
                stats["killed_before_session"] += 1
            if not sessions:
                if started:
                    raise check_export.CheckFailed("the session vanished")
                continue
            if len(sessions) != 1:
                raise check_export.CheckFailed(f"expected one session, found {len(sessions)}")
            s = sessions[0]
            if s["state"] != "interrupted":
                raise check_export.CheckFailed(f"state {s['state']}, expected interrupted")
            if s["frameCount"] < durable:
                raise check_export.CheckFailed(f"{s['frameCount']} frames after recovery < {durable} durable before the kill")
            stats["lost_nothing"] += 1
            stats["frames_total"] += s["frameCount"]
            dirs = []
            for fmt in ["csv", "hdf5"]:
                e = run([a.facekit, "export", s["sessionID"], "--store", store, "--to", out, "--format", fmt] + (["--images"] if images else []))
                if e.returncode != 0:
                    raise check_export.CheckFailed(f"export {fmt} failed: {e.stderr.strip()}")
                dirs.append(e.stdout.split(" -> ")[1].split(" (")[0])
            check_export.main(dirs + ["--seed", str(seed), "--frames", str(s["frameCount"]), "--vertices", mode], quiet=True)
        except check_export.CheckFailed as e:
            failures.append(f"{label}: {e}")
            print(f"crash_trials: FAIL {label}: {e}", file=sys.stderr)
            continue
        shutil.rmtree(os.path.join(a.workdir, f"trial{t:03d}"), ignore_errors=True)
    print(f"crash_trials: {a.trials - len(failures)}/{a.trials} trials passed; {stats['lost_nothing']} sessions recovered "
          f"with every flushed frame ({stats['frames_total']} frames), {stats['killed_before_session']} killed before the session existed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
