#!/usr/bin/env bash
# Idempotent setup for development, tests and the bundled example, on a fresh machine.
# `scripts/setup.sh --core` skips the editors and the VS Code toolchain (tests need them).
#   .venvs/dev : Python 3.12 with pallas-lsp (editable) and its test dependencies. No jax.
#   .venvs/jax : Python 3.12 with jax 0.12 (CPU): the "analysed project" environment the tests
#                resolve names against, and the real JAX the tests lower kernels with.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python312() {
  for candidate in python3.12 "$(pyenv root 2>/dev/null)/versions/3.12"*/bin/python3 /root/.pyenv/versions/3.12*/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "setup: Python 3.12 not found (jax 0.11+ needs it); install it, e.g. 'pyenv install 3.12'" >&2
  return 1
}

PY312=$(find_python312)
JAX_VERSION=${PALLAS_LSP_JAX_VERSION:-0.12.0.1}

if [ ! -x .venvs/dev/bin/python ]; then
  "$PY312" -m venv .venvs/dev
fi
.venvs/dev/bin/python -m pip install --quiet --upgrade pip
.venvs/dev/bin/python -m pip install --quiet -e ".[test]"
# Bytecode for the editable package, as pip writes it for an installed one: where bytecode writing is
# off (PYTHONDONTWRITEBYTECODE), every server start would compile all its modules again (~60 ms).
.venvs/dev/bin/python -m compileall -q server/pallas_lsp

if [ ! -x .venvs/jax/bin/python ]; then
  "$PY312" -m venv .venvs/jax
fi
if ! .venvs/jax/bin/python -c "import jax, sys; sys.exit(jax.__version__ != '$JAX_VERSION')" 2>/dev/null; then
  .venvs/jax/bin/python -m pip install --quiet --upgrade pip
  .venvs/jax/bin/python -m pip install --quiet "jax==$JAX_VERSION"
fi
if [ "${1:-}" != "--core" ]; then  # --core: only what `pallas-lsp check`/`serve`/`trace` need
  bash scripts/setup-editors.sh  # Neovim and Emacs+eglot for tests/editors (apt, only when missing)
  bash scripts/setup-vscode.sh  # VS Code extension: Chromium, Node 24, npm workspace (code-server), the .vsix
fi
echo "setup: ready (.venvs/dev: $(.venvs/dev/bin/pallas-lsp --version); .venvs/jax: jax $(.venvs/jax/bin/python -c 'import jax; print(jax.__version__)'))"
