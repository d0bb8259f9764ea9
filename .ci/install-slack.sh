#!/usr/bin/env bash
# Installs Slack's official Bolt framework (@slack/bolt on npm) under .ci/node-slack, whose
# verifySlackRequest checks Slack's v0 request signatures: the slack channel's tests sign requests
# with it and check Parley accepts them, and tampered ones not.
# Without node/npm it says so and exits 0: those tests then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

version="5.1.0"
prefix=".ci/node-slack"
pkg="$prefix/node_modules/@slack/bolt/package.json"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-slack: npm not found; the Slack signature test will skip"
  exit 0
fi
if [ -f "$pkg" ] && [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-slack: @slack/bolt $version already installed"
  exit 0
fi
mkdir -p "$prefix"
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "@slack/bolt@$version"; then
  echo "install-slack: WARNING: npm install failed; the Slack signature test will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-slack: installed @slack/bolt $version under $prefix"
