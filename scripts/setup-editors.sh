#!/usr/bin/env bash
# Idempotent: installs the real editors that tests/editors drives headless (Neovim, Emacs with
# eglot) from Debian packages, only when they are missing. `apt-get update` runs only when
# something is to be installed; sudo is used only when not root and sudo exists.
set -euo pipefail

missing=()
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
# eglot is built into Emacs 29+; on older Emacs it comes from Debian's elpa-eglot.
if ! { command -v emacs >/dev/null 2>&1 && emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; }; then
  missing+=(elpa-eglot)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-editors: neovim and emacs with eglot already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-editors: missing ${missing[*]} and no apt-get here; install them by hand to run tests/editors" >&2
  exit 1
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "setup-editors: missing ${missing[*]}; need root or sudo to install them with apt-get" >&2
    exit 1
  fi
fi

echo "setup-editors: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-editors: ready ($(nvim --version | head -1); $(emacs --version | head -1))"
