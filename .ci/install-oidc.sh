#!/usr/bin/env bash
# Installs oidc-provider (panva/node-oidc-provider), a certified OpenID Connect provider, under
# .ci/oidc, so the single sign-on suites (pkg/api, web/webtest) sign in through a real provider:
# discovery, JWKS, PKCE and its own login and consent pages. Without node/npm it says so and
# exits 0: those suites then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

version="9.13.3"
prefix=".ci/oidc"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-oidc: npm not found; the single sign-on suites will skip"
  exit 0
fi
if [ -f "$prefix/node_modules/oidc-provider/package.json" ] && [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-oidc: oidc-provider $version already installed"
  exit 0
fi
mkdir -p "$prefix"
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "oidc-provider@$version"; then
  echo "install-oidc: WARNING: npm install failed; the single sign-on suites will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-oidc: installed oidc-provider $version under $prefix"
