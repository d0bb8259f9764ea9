#!/usr/bin/env bash
# Installs the reference MCP server (@modelcontextprotocol/server-everything) under .ci/node,
# so the pkg/tool/mcptool suites can run it over stdio, SSE and streamable HTTP.
# Without node/npm it says so and exits 0: those suites then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

version="2026.8.31"
prefix=".ci/node"
bin="$prefix/node_modules/.bin/mcp-server-everything"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-mcp: npm not found; the server-everything suites will skip"
  exit 0
fi
if [ -x "$bin" ] && [ "$(cat "$prefix/.version" 2>/dev/null)" = "$version" ]; then
  echo "install-mcp: server-everything $version already installed"
  exit 0
fi
mkdir -p "$prefix"
# A registry outage should cost these suites (they skip, saying why), not the whole CI run.
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "@modelcontextprotocol/server-everything@$version"; then
  echo "install-mcp: WARNING: npm install failed; the server-everything suites will skip"
  exit 0
fi
echo "$version" >"$prefix/.version"
echo "install-mcp: installed server-everything $version under $prefix"
