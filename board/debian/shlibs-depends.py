#!/usr/bin/env python3
"""Depends for facekit's package: each NEEDED library of the given ELF files, mapped through the
shlibs control file of the package that ships it, as dpkg-shlibdeps does. dpkg-shlibdeps needs a
dpkg database, which an extracted cross sysroot does not have; the sysroot keeps the .debs it
was made from, and their control files are the same data.

glibc is the exception: its shlibs entry names the newest glibc, while the binaries need only the
newest GLIBC_x.y symbol version they reference (what glibc's symbols file would give), so a
package built against a newer sysroot still installs on an older, compatible system.

usage: shlibs-depends.py --readelf READELF --root ROOT --triplet TRIPLET ELF...
  ROOT /: the host's dpkg database; else a sysroot whose var/cache/apt/archives holds its .debs.
"""
import argparse, glob, os, re, subprocess, sys

def host_shlibs(sonames, triplet):
    """The host's own packages: each soname's file in the triplet's library directories, the
    package dpkg says owns it, and that package's shlibs file (a cross toolchain's packages
    ship the same sonames for other architectures; they must not answer)."""
    texts = []
    for soname in sonames:
        for d in (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib", "/usr/lib"):
            path = os.path.join(d, soname)
            if not os.path.exists(path):
                continue
            r = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
            if r.returncode != 0:  # merged /usr: dpkg may know the other spelling
                alt = path[4:] if path.startswith("/usr/") else "/usr" + path
                r = subprocess.run(["dpkg", "-S", alt], capture_output=True, text=True)
            if r.returncode == 0:
                pkg = r.stdout.split(":", 1)[0] if r.stdout.count(":") > 1 else r.stdout.split(": ", 1)[0]
                for f in glob.glob(f"/var/lib/dpkg/info/{pkg}.shlibs") + glob.glob(f"/var/lib/dpkg/info/{pkg}:*.shlibs"):
                    texts.append(open(f).read())
                break
    return texts

def shlibs_entries(root, sonames, triplet):
    """(library, soversion) -> dependency, from the shlibs files of the packages in ROOT."""
    texts = []
    if root == "/":
        texts = host_shlibs(sonames, triplet)
    else:
        debs = glob.glob(os.path.join(root, "var/cache/apt/archives/*.deb"))
        if not debs:
            sys.exit(f"{root}: no .debs in var/cache/apt/archives (make the sysroot with mmdebstrap --skip=download/empty --skip=cleanup/apt/cache)")
        for deb in debs:
            r = subprocess.run(["dpkg-deb", "-I", deb, "shlibs"], capture_output=True, text=True)
            if r.returncode == 0:
                texts.append(r.stdout)
    table = {}
    for text in texts:
        for line in text.splitlines():
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[0].endswith(":"):  # "udeb: ..." lines are for the installer
                continue
            table.setdefault((parts[0], parts[1]), parts[2].strip())
    return table

def soname_key(soname):
    m = re.fullmatch(r"(.+)\.so\.(.+)", soname) or re.fullmatch(r"(.+)-([0-9.]+)\.so", soname)
    if not m:
        sys.exit(f"cannot split soname {soname}")
    return m.group(1), m.group(2)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readelf", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--triplet", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    needed, glibc = set(), (0, 0)
    for f in a.files:
        dyn = subprocess.run([a.readelf, "-d", "--wide", f], capture_output=True, text=True, check=True).stdout
        needed.update(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn))
        ver = subprocess.run([a.readelf, "-V", "--wide", f], capture_output=True, text=True, check=True).stdout
        for major, minor in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", ver):
            glibc = max(glibc, (int(major), int(minor)))
    table = shlibs_entries(a.root, sorted(needed), a.triplet)
    deps = set()
    for soname in sorted(needed):
        key = soname_key(soname)
        dep = table.get(key)
        if dep is None:
            sys.exit(f"no package's shlibs names {soname} in {a.root}: is its library package in the sysroot?")
        if dep.startswith("libc6 ") or dep == "libc6":
            dep = f"libc6 (>= {glibc[0]}.{glibc[1]})" if glibc != (0, 0) else "libc6"
        deps.add(dep)
    # One entry per package, the strictest version wins (versions within a package compare as strings
    # only when equal; differing ones are kept apart for dpkg to AND together).
    print(", ".join(sorted(deps)))

main()
