#!/usr/bin/env python3
"""Host-side checks of the stick cases (scripts/tests/48-stick-cases.sh); standard library only.

    check-stick-cases.py RUNDIR PREPDIR

RUNDIR is the boot's scripts/board/run directory (console.log, usb<i>.img), PREPDIR the images and
files the test prepared. Every case must have passed in the guest (STICK-CASE ... PASS); every
marker a case left (STICK-MARKERS) must name an export complete on that case's stick (each file's
SHA-256 as its manifest says, the session's frames); the refused sticks hold no marker; the
write-protected stick is byte for byte what it was; the full stick holds no partial export; and
on the hostile stick the forged export, the foreign partial folder and the namesake file are
untouched and no marker names the forged export.
"""
import hashlib, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stick_exports import export_problem  # noqa: E402

STICK = {"full": 2, "readonly": 3, "corrupt": 4, "twosticks": 5, "pulled": 7, "hostile": 8}
failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def copy_out(img, dest):
    """The stick's facekit/ folder (mtools; bounded, a damaged FAT can loop)."""
    os.makedirs(dest, exist_ok=True)
    env = dict(os.environ, mtools_skip_check="1")
    try:
        subprocess.run(["mcopy", "-s", "-n", "-i", img + "@@1M", "::facekit", dest + "/"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    except subprocess.TimeoutExpired:
        pass
    return dest


def sha(path):
    try:
        return hashlib.sha256(open(path, "rb").read()).hexdigest()
    except OSError:
        return None


def main():
    run, prep = sys.argv[1], sys.argv[2]
    log = open(os.path.join(run, "console.log"), errors="replace").read()
    for case in STICK:
        m = re.search(rf"STICK-CASE: {case} (PASS|FAIL.*)", log)
        check(m is not None and m.group(1) == "PASS", f"{case}: guest checks ({m.group(1) if m else 'not run'})")
    tmp = tempfile.mkdtemp(prefix="facekit-stick-check-")
    sticks = {c: copy_out(os.path.join(run, f"usb{i}.img"), os.path.join(tmp, c)) for c, i in STICK.items()}
    markers = {}
    for case, sid, raw in re.findall(r"STICK-MARKERS: case=(\S+) session=(\S+) marker=(\S+)", log):
        markers.setdefault(case, []).append((sid, json.loads(raw)))
    for case in ("full", "readonly", "corrupt"):
        check(not markers.get(case), f"{case}: no session marked exported ({[s for s, _ in markers.get(case, [])]})")
    for case in ("twosticks", "pulled", "hostile"):
        for sid, mk in markers.get(case, []):
            # The frame count the card holds is in the marker and in the export's session.json;
            # export_problem checks the manifest against the marker.
            why = export_problem(sticks[case], mk, mk.get("frames"))
            check(why is None, f"{case}: {sid} marked exported and complete on the stick ({mk.get('directory')}{': ' + why if why else ''})")
    check(len(markers.get("twosticks", [])) == 3 and len(markers.get("hostile", [])) == 3,
          f"twosticks and hostile marked all three sessions ({len(markers.get('twosticks', []))}, {len(markers.get('hostile', []))})")
    ro_same = open(os.path.join(run, "usb3.img"), "rb").read() == open(os.path.join(prep, "readonly.img"), "rb").read()
    check(ro_same, "the write-protected stick is unchanged")
    full = os.path.join(sticks["full"], "facekit")
    left = [n for n in (os.listdir(full) if os.path.isdir(full) else []) if ".partial-" in n]
    check(not left, f"no partial export left on the full stick ({left})")
    h = os.path.join(sticks["hostile"], "facekit")
    for name in ("session.json", "session.h5", "manifest.json"):
        check(sha(os.path.join(h, "session_A1_forged", name)) == sha(os.path.join(prep, "forged", name)),
              f"hostile: the forged export's {name} untouched")
    day = [n for n in os.listdir(h) if n.startswith(".session_A2_")] if os.path.isdir(h) else []
    check(len(day) == 1 and sha(os.path.join(h, day[0], "precious.txt")) == sha(os.path.join(prep, "precious.txt")),
          f"hostile: the foreign partial-shaped folder and its file kept ({day})")
    namesake = [n for n in os.listdir(h) if re.fullmatch(r"session_A2_\d{4}-\d\d-\d\d", n)] if os.path.isdir(h) else []
    check(len(namesake) == 1 and sha(os.path.join(h, namesake[0])) == sha(os.path.join(prep, "namesake.txt")),
          "hostile: the file with the export's name untouched (the export took another name)")
    check(all("forged" not in mk.get("directory", "") for _, mk in markers.get("hostile", [])),
          "hostile: no marker names the forged export")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
