# Sourced by the scripts: repo paths and small helpers.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$REPO/.venv"
MODELS="$REPO/models"
TESTDATA="$REPO/testdata"
CACHE="$REPO/.cache"
log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }
# Python interpreter that builds the venv: the system one must have venv+ensurepip.
host_python() { command -v python3.11 || command -v python3; }
