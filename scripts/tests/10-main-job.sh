#!/usr/bin/env bash
# The README's first command ends in the main job: it must run on a clean checkout and again on
# one that already has its output. Runs it twice and reads the newest export back with pandas:
# 72 frames of single_face.mp4, a face in each, the seed's 52 blend-shape columns in [0, 1]
# (tongueOut, which MediaPipe does not estimate, empty).
source "$(dirname "$0")/../lib/common.sh"
cd "$REPO"
for run in 1 2; do
  log "main job, run $run"
  out="$("$REPO/scripts/main-job" 2>&1)" || { printf '%s\n' "$out" >&2; die "the main job failed on run $run"; }
done
export_dir="$(printf '%s\n' "$out" | sed -n 's/^session .* -> \(out\/session_demo_[^ ]*\) (.*$/\1/p' | tail -1)"
[ -n "$export_dir" ] && [ -d "$export_dir" ] || { printf '%s\n' "$out" >&2; die "the main job named no export directory"; }
"$VENV/bin/python" - "$export_dir" <<'PY'
import sys
import pandas as pd
d = sys.argv[1]
blend = pd.read_csv(f"{d}/blendshapes.csv")
marks = pd.read_csv(f"{d}/landmarks.csv")
names = [c for c in blend.columns if c not in ("timestamp", "frameIndex")]
bad = []
if len(blend) != 72 or len(marks) != 72: bad.append(f"{len(blend)} blend-shape rows, {len(marks)} landmark rows (expected 72)")
if len(names) != 52: bad.append(f"{len(names)} blend-shape columns (expected 52)")
# MediaPipe has no tongueOut: the seed's column is kept and left empty.
values = blend[[n for n in names if n != "tongueOut"]]
if values.isna().any().any(): bad.append("a frame without blend shapes (no face?)")
elif not ((values >= 0) & (values <= 1)).all().all(): bad.append("a blend shape outside [0, 1]")
if bad: sys.exit(f"main job export {d}: " + "; ".join(bad))
print(f"PASS: main job: {d} has 72 frames with a face and 52 blend shapes")
PY
