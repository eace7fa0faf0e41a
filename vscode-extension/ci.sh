#!/usr/bin/env bash
# Build, test and package the VS Code extension; called from .ci/run. Exits non-zero on any failure.
#
#   npm ci -> tsc (strict) -> npm run package (builds the server's wheels unless bundled/libs is
#   current, esbuild bundles the client, vsce packages) -> node --test (unit + end-to-end: ../server,
#   and the .vsix's bundled server on a fresh venv) -> check-vsix
#
# ${KIMI_LSP_PYTHON:-python3} builds the wheels (pip wheel / pip download from the package
# registry: build time only, the extension never installs anything) and runs the end-to-end tests
# against ../server (`-m kimi_lsp serve` with PYTHONPATH=../server), so it needs pip and the
# server's dependencies (pygls 2, lsprotocol, pyyaml, tomlkit, packaging). The bundle's test makes
# its own empty venv from it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

python="${KIMI_LSP_PYTHON:-python3}"
if ! "$python" -c 'import pygls.lsp.server, lsprotocol.types, yaml, tomlkit, packaging, pip' 2>/dev/null; then
  echo "vscode-extension/ci.sh: $python lacks pip or the server's dependencies; install the project first (pip install -e ..)" >&2
  exit 1
fi

step() { printf '\n== vscode-extension: %s (at %ss)\n' "$*" "$SECONDS"; }

step "npm ci"
npm ci --no-audit --no-fund

step "compile (tsc, strict)"
npm run --silent compile

# One command, as a user packages: bundled/libs (kimi-lsp and its dependencies as pure-Python
# wheels) is built by vscode:prepublish unless it is current, then esbuild bundles the client.
step "package (npm run package: the server's wheels, dist/extension.js, kimi-lsp.vsix)"
rm -f kimi-lsp.vsix
KIMI_LSP_PYTHON="$python" npm run --silent package

step "test (unit + e2e, including the packaged bundle)"
# One node --test run, so that its closing summary counts every test. The bundle's test must not
# skip here: the .vsix was just packaged.
KIMI_LSP_PYTHON="$python" KIMI_LSP_REQUIRE_VSIX=1 node --test out/test/unit/*.test.js out/test/e2e/*.test.js

step "check-vsix"
npm run --silent check-vsix
printf '\n== vscode-extension: ok in %ss\n' "$SECONDS"
