#!/usr/bin/env bash
# The real-file latency bench (bench/real_file_latency.py) on a quiet machine with many cores (the device
# host), where wall times mean something: keystroke → diagnostics over LSP on the four real files, the four
# open together (RSS), and `check` wall/CPU with `--jobs 1` and the default on the package trees. It needs
# only a Python there: pallas-lsp runs from this checkout, its dependencies and the pinned wheels brought
# along (no network). Here, first:
#   bench/device_real_files.sh prepare [BEFORE_COMMIT]   # device-bench/: the wheels, and BEFORE's server/
# There (carry .device-wheels and device-bench):
#   OUT=$OUT [PARTS='keystroke together check timeline timeline-jax latency'] bash bench/device_real_files.sh run   # JSON, tables under $OUT
# `timeline-jax`: the timeline with jax's and jaxlib's Python sources on the analysed interpreter's path, as a
# user's interpreter has them (the host's python3 has neither; only read there, never imported): prepare takes
# the jax wheel of bench/.generated/real_code (or JAX_WHEEL=path) and the .py/.pyi files of .venvs/jax's jaxlib
# (or JAXLIB_DIR=path; its compiled modules, 330 MB, stay here).
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = prepare ]; then
  rm -rf device-bench && mkdir -p device-bench/wheels
  cp "${XDG_CACHE_HOME:-$HOME/.cache}"/pallas-lsp-bench/wheels/*.whl device-bench/wheels/
  if [ -n "${2:-}" ]; then
    mkdir -p device-bench/before && git archive "$2" server | tar x -C device-bench/before
    git rev-parse "$2" > device-bench/before/COMMIT
  fi
  JAX_WHEEL=${JAX_WHEEL:-$(ls bench/.generated/real_code/dists/jax-*/jax-*.whl 2>/dev/null | tail -1)}
  JAXLIB_DIR=${JAXLIB_DIR:-$(ls -d .venvs/jax/lib/python*/site-packages/jaxlib 2>/dev/null | tail -1)}
  if [ -n "$JAX_WHEEL" ] && [ -n "$JAXLIB_DIR" ]; then
    mkdir -p device-bench/jax/sources && cp "$JAX_WHEEL" device-bench/jax/
    python3 - "$JAXLIB_DIR" device-bench/jax/sources/jaxlib <<'PY'
import os, shutil, sys
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith((".py", ".pyi")) or name == "py.typed":
            target = os.path.join(sys.argv[2], os.path.relpath(folder, sys.argv[1]))
            os.makedirs(target, exist_ok=True)
            shutil.copy2(os.path.join(folder, name), target)
PY
  else
    echo "no jax wheel or jaxlib (JAX_WHEEL, JAXLIB_DIR): PARTS=timeline-jax will not run" >&2
  fi
  du -sh device-bench; exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 prepare [BEFORE] | $0 run" >&2; exit 2; }
PY=$(command -v python3)
VERSION=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
LIBS=${TMPDIR:-/tmp}/pallas-lsp-device-libs
"$PY" -m pip install -q --no-index --find-links ".device-wheels/py$VERSION" --target "$LIBS" jedi libcst pygls \
  2>&1 | grep -v "^WARNING: Target directory" || true
export PYTHONPATH=$LIBS${PYTHONPATH:+:$PYTHONPATH}
CACHE=${TMPDIR:-/tmp}/pallas-lsp-bench && mkdir -p "$CACHE"
"$PY" - "$CACHE" <<'PY'  # unpacked as bench/real_file_latency.py's unpacked() does, from the wheels brought along
import pathlib, sys, zipfile
cache = pathlib.Path(sys.argv[1])
for wheel in pathlib.Path("device-bench/wheels").glob("*.whl"):
    project, version = wheel.name.split("-")[:2]
    target = cache / f"{project.replace('_', '-')}-{version}"
    zipfile.ZipFile(wheel).extractall(target)
    (target / ".unpacked").write_text(wheel.name + "\n")
PY
OUT=${OUT:-/tmp/device-bench-out} && mkdir -p "$OUT"
BEFORE=() && [ -d device-bench/before ] && BEFORE=(--before device-bench/before) && echo "before: $(cat device-bench/before/COMMIT)"
echo "after: $(git rev-parse HEAD 2>/dev/null || echo this checkout)"; nproc; uptime
run() { echo "\$ bench/real_file_latency.py $*"; PYTHONPATH=$PWD/server:$PYTHONPATH "$PY" bench/real_file_latency.py \
  --cache "$CACHE" --python "$PY" "${BEFORE[@]}" "$@"; echo "[exit status $?]"; }
for part in ${PARTS:-keystroke together check}; do  # PARTS: a subset, to fit a call's time limit
  case $part in
    keystroke) run --edits 40 --warmup 4 --json "$OUT/keystroke.json" 2>&1 | tee "$OUT/keystroke.txt" ;;
    together) run --edits 20 --warmup 4 --together --json "$OUT/together.json" 2>&1 | tail -12 | tee "$OUT/together.txt" ;;
    check) run --check --runs 1 --json "$OUT/check.json" 2>&1 | tee "$OUT/check.txt" ;;
    latency) J=$("$PY" -c 'import importlib.util as u; print(u.find_spec("jax").submodule_search_locations[0])')
      for source in ${BEFORE[@]:+"$PWD/${BEFORE[1]}"} "$PWD"; do  # the <= 50 ms file, before then after
        echo "\$ bench/lsp_latency.py --source $source"
        PALLAS_LSP_JAX_PYTHON=$PY "$PY" bench/lsp_latency.py --edits 100 --warmup 5 --python "$PY" --source "$source" \
          --file "$J/experimental/pallas/ops/gpu/collective_matmul_mgpu.py" --root "$J"
      done 2>&1 | tee "$OUT/latency.txt" ;;
    timeline|timeline-jax) JAX_SOURCES=  # the first analysis's timeline (first publish, settled), before then after
      if [ $part = timeline-jax ]; then
        JAX_SOURCES=${TMPDIR:-/tmp}/pallas-lsp-device-jax && mkdir -p "$JAX_SOURCES"
        "$PY" -c 'import glob, sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in glob.glob("device-bench/jax/*.whl")]' "$JAX_SOURCES"
        cp -r device-bench/jax/sources/. "$JAX_SOURCES"/
      fi
      for round in 1 2; do
        for source in ${BEFORE[@]:+"$PWD/${BEFORE[1]}"} "$PWD"; do echo "\$ bench/lsp_first_timeline.py --source $source (round $round)"
          PYTHONPATH=${JAX_SOURCES:+$JAX_SOURCES:}$PYTHONPATH "$PY" bench/lsp_first_timeline.py --cache "$CACHE" --python "$PY" \
            --source "$source"; done
      done 2>&1 | tee "$OUT/$part.txt" ;;
  esac
done
