"""What a stick holds, read on the host from the facekit/ folder copied out of its image with mtools
(scripts/board/check-power-cuts.py, check-stick-cases.py)."""
import hashlib, json, os


def export_problem(stick, marker, frames):
    """Why the export a session's exported.json names is not complete on the stick (every file's
    size and SHA-256 as its manifest says, the session's frame count in manifest and marker), or
    None when it is. `stick` is the copied folder that holds facekit/."""
    d = os.path.join(stick, marker.get("directory", "?"))
    try:
        man = json.load(open(os.path.join(d, "manifest.json")))
    except (OSError, ValueError) as e:
        return f"no readable manifest at {d}: {e}"
    for f in man["files"]:
        try:
            data = open(os.path.join(d, f["path"]), "rb").read()
        except OSError:
            return f"{f['path']} missing"
        if len(data) != f["size"] or hashlib.sha256(data).hexdigest() != f["sha256"]:
            return f"{f['path']} does not match the manifest"
    if man["frameCount"] != frames or marker.get("frames") != frames:
        return f"frames: manifest {man['frameCount']}, marker {marker.get('frames')}, session {frames}"
    return None
