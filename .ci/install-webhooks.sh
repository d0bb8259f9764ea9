#!/usr/bin/env bash
# Installs the official Standard Webhooks library (standardwebhooks on npm) under .ci/node-webhooks,
# so pkg/webhook's tests verify Parley's signatures the way a receiver would.
# Without node/npm it says so and exits 0: that test then skips with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

version="1.1.1"
prefix=".ci/node-webhooks"
pkg="$prefix/node_modules/standardwebhooks/package.json"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-webhooks: npm not found; the standardwebhooks test will skip"
  exit 0
fi
if [ -f "$pkg" ] && [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-webhooks: standardwebhooks $version already installed"
  exit 0
fi
mkdir -p "$prefix"
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "standardwebhooks@$version"; then
  echo "install-webhooks: WARNING: npm install failed; the standardwebhooks test will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-webhooks: installed standardwebhooks $version under $prefix"
