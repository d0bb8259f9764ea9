#!/usr/bin/env bash
# Installs jose (panva/jose), a maintained JWT library for JavaScript, under .ci/jose, so the
# pkg/identity suites verify tokens a tenant's Node backend would really sign (HS256, RS256,
# ES256, JWKS). Without node/npm it says so and exits 0: those suites then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

version="6.2.18"
prefix=".ci/jose"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-jose: npm not found; the signed-token suites will skip"
  exit 0
fi
if [ -f "$prefix/node_modules/jose/package.json" ] && [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-jose: jose $version already installed"
  exit 0
fi
mkdir -p "$prefix"
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "jose@$version"; then
  echo "install-jose: WARNING: npm install failed; the signed-token suites will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-jose: installed jose $version under $prefix"
