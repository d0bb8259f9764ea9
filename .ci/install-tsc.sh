#!/usr/bin/env bash
# Installs TypeScript under .ci/tsc, for `make typecheck`: tsc --checkJs reads the
# JSDoc types of the admin UI and the widget (web/static, no build step) and
# fails on type errors. Without node/npm it says so and exits 0: `make typecheck`
# then skips with a message (CI insists on it, see .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

version="5.9.3"
prefix=".ci/tsc"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-tsc: npm not found; the type check will skip"
  exit 0
fi
if [ -x "$prefix/node_modules/.bin/tsc" ] && [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-tsc: typescript $version already installed"
  exit 0
fi
mkdir -p "$prefix"
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "typescript@$version"; then
  echo "install-tsc: WARNING: npm install failed; the type check will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-tsc: installed typescript $version under $prefix"
