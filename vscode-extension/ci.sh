#!/usr/bin/env bash
# Build, test and package the VS Code extension; called from .ci/run. Exits non-zero on any failure.
#
#   npm ci -> tsc (strict) -> node --test (unit + end-to-end against ../server) -> vsce package -> check-vsix
#
# The end-to-end tests run `${KIMI_LSP_PYTHON:-python3} -m kimi_lsp serve` with PYTHONPATH=../server,
# so that interpreter needs the server's dependencies (pygls 2, lsprotocol, pyyaml, tomlkit, packaging).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

python="${KIMI_LSP_PYTHON:-python3}"
if ! "$python" -c 'import pygls.lsp.server, lsprotocol.types, yaml, tomlkit, packaging' 2>/dev/null; then
  echo "vscode-extension/ci.sh: $python lacks the server's dependencies; install the project first (pip install -e ..)" >&2
  exit 1
fi

step() { printf '\n== vscode-extension: %s (at %ss)\n' "$*" "$SECONDS"; }

step "npm ci"
npm ci --no-audit --no-fund

step "compile (tsc, strict)"
npm run --silent compile

step "test (unit + e2e)"
# One node --test run, so that its closing summary counts every test.
node --test out/test/unit/*.test.js out/test/e2e/*.test.js

step "package"
rm -f kimi-lsp.vsix
npm run --silent package

step "check-vsix"
npm run --silent check-vsix
printf '\n== vscode-extension: ok in %ss\n' "$SECONDS"
