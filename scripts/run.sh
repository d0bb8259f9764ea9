#!/usr/bin/env bash
# What `make run` runs after building bin/: bin/parley serve on its embedded
# defaults. With no model key (PARLEY_LLM_API_KEY and OPENAI_API_KEY empty)
# and the default model address (PARLEY_LLM_BASE_URL unset, provider
# openai), it first starts the bundled fake model, bin/fakellm (it echoes
# what it is told), on 127.0.0.1:8089 and points Parley at it, so a first
# answer needs no account and no restart. Set PARLEY_LLM_API_KEY for a
# real model; FAKELLM_ADDR moves the fake.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${PARLEY_LLM_API_KEY:-}" && -z "${OPENAI_API_KEY:-}" && -z "${PARLEY_LLM_BASE_URL:-}" && "${PARLEY_LLM_PROVIDER:-openai}" == openai ]]; then
  addr=${FAKELLM_ADDR:-127.0.0.1:8089}
  ./bin/fakellm -addr "$addr" -chunk-delay 20ms &
  fake=$!
  trap 'kill "$fake" 2>/dev/null || true' EXIT
  export PARLEY_LLM_BASE_URL="http://$addr/v1" PARLEY_LLM_API_KEY=fakellm
  echo "make run: no PARLEY_LLM_API_KEY is set, so bots answer with the bundled fake model (bin/fakellm, it echoes) at http://$addr/v1."
  echo "make run: for a real model, stop and run: PARLEY_LLM_API_KEY=sk-... make run"
fi
echo "make run: to let bots' tools reach a test server on this machine (port 8081, say), start with: PARLEY_OUTBOUND_ALLOW=127.0.0.1/32 PARLEY_OUTBOUND_PORTS=8081 make run"
./bin/parley serve
