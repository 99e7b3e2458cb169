#!/usr/bin/env bash
# JAX in the loop on a machine with a GPU or a TPU: `check --trace` and `types --trace` on
# examples/in_the_loop, every launch JAX lowers for the attached platform compiled there, then the test
# that checks it. Needs only jax there: pallas-lsp runs from this checkout, its dependencies installed
# from wheels brought along (no network). Output is what docs/jax-in-the-loop.md records.
#   scripts/jax-in-the-loop-device.sh [PYTHON] [FOLDER] [WHEELS_DIR]
# FOLDER: examples/in_the_loop (default; Mosaic GPU and TPU kernels), or examples/in_the_loop/tpu where
# the machine's jax cannot import Mosaic GPU (a TPU machine's may not).
# WHEELS_DIR (default .device-wheels/pyXY): jedi, libcst, pygls, pytest, pytest-timeout, pytest-lsp and hypothesis wheels for
# that Python, from `pip download --only-binary=:all: --python-version X.Y --platform manylinux_2_28_x86_64 ...`.
set -u
cd "$(dirname "$0")/.."
PY=$(command -v "${1:-python3}")
VERSION=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
FOLDER=${2:-examples/in_the_loop}
WHEELS=${3:-.device-wheels/py$VERSION}
LIBS=${TMPDIR:-/tmp}/pallas-lsp-device-libs
"$PY" -m pip install -q --no-index --find-links "$WHEELS" --target "$LIBS" jedi libcst pygls pytest pytest-timeout pytest-lsp hypothesis \
  2>&1 | grep -v "^WARNING: Target directory" || true
export PYTHONPATH=$PWD/server:$LIBS${PYTHONPATH:+:$PYTHONPATH} PALLAS_LSP_JAX_PYTHON=$PY PALLAS_LSP_CACHE_DIR=$(mktemp -d)
nvidia-smi -L 2>/dev/null || true
"$PY" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())'
echo
say() { echo "\$ pallas-lsp $*"; "$PY" -m pallas_lsp "$@"; echo "[exit status $?]"; echo; }
say check --trace -v --python "$PY" "$FOLDER"
say types --trace --python "$PY" "$FOLDER"
echo "\$ PALLAS_LSP_TRACE_COMPILE=0 pallas-lsp check --trace --python $PY $FOLDER"
PALLAS_LSP_TRACE_COMPILE=0 "$PY" -m pallas_lsp check --trace --python "$PY" "$FOLDER"
echo "[exit status $?]"; echo
echo "\$ pytest tests/trace/test_jax_in_the_loop.py -k attached"
"$PY" -m pytest -p no:cacheprovider -q tests/trace/test_jax_in_the_loop.py -k attached 2>&1 | tail -3
