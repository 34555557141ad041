"""A pylsl markers inlet for the emulated board's kiosk test: resolves the stream named NAME,
then writes every marker it receives to OUT as one line `<sender timestamp in ns> <label>`,
flushed at once, until STOPFILE exists or the deadline passes. The sender's timestamp is the
LSL clock, which on Linux is CLOCK_MONOTONIC, so the guest compares it with the kernel's edge
timestamps in the kiosk's log directly."""
import argparse, os, sys, time

import pylsl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name"); ap.add_argument("out"); ap.add_argument("stopfile")
    ap.add_argument("--seconds", type=float, default=600)
    a = ap.parse_args()
    end = time.monotonic() + a.seconds
    with open(a.out, "w", buffering=1) as out:
        streams = []
        while not streams and time.monotonic() < end and not os.path.exists(a.stopfile):
            streams = pylsl.resolve_byprop("name", a.name, minimum=1, timeout=1.0)
        if not streams:
            print(f"markers_inlet: no stream named {a.name}", file=sys.stderr)
            return 1
        inlet = pylsl.StreamInlet(streams[0], recover=True)
        inlet.open_stream(timeout=10)
        out.write(f"# connected {streams[0].source_id()}\n")
        while time.monotonic() < end and not os.path.exists(a.stopfile):
            sample, ts = inlet.pull_sample(timeout=0.2)
            if sample is not None:
                out.write(f"{round(ts * 1e9)} {sample[0]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
