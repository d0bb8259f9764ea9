#!/usr/bin/env bash
# Installs the official clients the API's OpenAI and MCP faces are tested with
# (the `openai` package and @modelcontextprotocol/sdk) under .ci/clients, so the
# pkg/api client suites can drive the real server with them.
# Without node/npm it says so and exits 0: those suites then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

openai="6.30.1"
mcp="1.32.2"
version="openai@$openai mcp-sdk@$mcp"
prefix=".ci/clients"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-clients: npm not found; the client suites will skip"
  exit 0
fi
if [ -d "$prefix/node_modules/openai" ] && [ -d "$prefix/node_modules/@modelcontextprotocol/sdk" ] &&
  [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-clients: $version already installed"
  exit 0
fi
mkdir -p "$prefix"
# A registry outage should cost these suites (they skip, saying why), not the whole CI run.
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "openai@$openai" "@modelcontextprotocol/sdk@$mcp"; then
  echo "install-clients: WARNING: npm install failed; the client suites will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-clients: installed $version under $prefix"
