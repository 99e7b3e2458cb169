#!/usr/bin/env bash
# Trace a good and a bad kernel through JAX with compilation, on a machine with a GPU, and time
# the trace (cold and warm worker) against doing it by hand. Needs only jax there (no pallas-lsp
# install: it runs from this checkout). Output is what docs/gpu-trace.md records.
#   scripts/gpu-trace-demo.sh [PYTHON]      (default: python3)
set -u
cd "$(dirname "$0")/.."
PY=$(command -v "${1:-python3}")
export PYTHONPATH=$PWD/server${PYTHONPATH:+:$PYTHONPATH}
run() {
  echo "\$ pallas-lsp trace $* --python $PY"
  "$PY" -m pallas_lsp trace "$@" --python "$PY"
  echo "[exit status $?]"
  echo
}
nvidia-smi -L || true
"$PY" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())'
echo
run tests/fixtures/trace/kernels.py::add_one
run tests/fixtures/trace/kernels.py::scaled --format json
run tests/fixtures/trace/bad_kernels.py::smem_global
run tests/fixtures/trace/bad_kernels.py::smem_global --format json
run tests/fixtures/trace/bad_kernels.py::interpreted --platform host
echo "\$ bench/trace_latency.py --python $PY --repeat 5"
"$PY" bench/trace_latency.py --python "$PY" --repeat 5
