// Command parleyload measures what Parley itself costs per dialog turn.
//
// It starts a real `parley serve` (or points at a running one), answers its
// model calls with the strict fake LLM of pkg/llm/llmtest at 0 ms latency,
// creates a tenant, a bot and dialogs through the HTTP API (pkg/api/apiclient)
// and drives N concurrent dialogs, each sending one message after another,
// as JSON or as server-sent events. For every level of concurrency it
// reports turn latency (p50, p90, p99), turns per second and errors, beside
// the latency of a raw model call to the same fake at the same concurrency and pace:
// the difference is the latency Parley adds. Last, it opens K event streams
// whose model reply is held back, so they stay open and idle, and reports the
// server's memory per stream from its /metrics (Go heap and stacks, RSS).
//
//	make build
//	./bin/parleyload -parley ./bin/parley                          # SQLite, 1/10/100 dialogs, JSON and SSE
//	./bin/parleyload -parley ./bin/parley -database-url postgres://...   # the same on PostgreSQL
//	./bin/parleyload -server http://host:8080 -token T -fake-addr 0.0.0.0:8089
//	./bin/parleyload -parley ./bin/parley -fake-tls                # model calls over HTTPS and HTTP/2
//	./bin/parleyload -parley ./bin/parley -sweep 1,10,50,200 -streams 0   # one row per level, 200 against 10
//	./bin/parleyload -parley ./bin/parley -database-url postgres://... -servers 3 -redis redis://127.0.0.1:6379/0
//
// -sweep runs the same load at each number of dialogs and prints one row
// each (turns/s, added p50 and p99, errors) and, per mode, the ratio of
// the most dialogs to 10; it skips the memory phase. -servers N starts N
// servers on the one PostgreSQL database of -database-url (SQLite's data
// dir is one server's, so it refuses) and creates the dialogs on them in
// turn; the figures are the whole. -redis (or PARLEY_REDIS_URL) shares
// the servers' limits through Redis, with a daily quota and a stream
// limit no run reaches, so every message pays Redis's round trip.
// -slow 20ms writes each answered turn slower than that to stderr with the
// time it started (UTC), to match a tail against the database's log.
// For the servers it started, every level also reports their CPU time and
// context switches per turn, all servers together, from /proc
// (usage.go): the first says whether a change costs more work, the second
// what several processes on shared cores pay in waking up.
// On -database-url it analyses the servers' tables after the first
// warm-up, so a run measures a database with planner statistics, as one
// in service has (analyze.go).
//
// docs/performance.md holds the figures of every round and how they were
// taken.
//
// Without -server it builds cmd/parley (or runs -parley BIN) with a fresh
// data dir, PARLEY_LOG_LEVEL=warn and the fake as PARLEY_LLM_BASE_URL. The
// memory phase runs its own server with GOGC=5, so the heap it reads is
// nearly all live memory rather than garbage awaiting collection. With
// -server, point that server's PARLEY_LLM_BASE_URL at -fake-addr.
//
// The fake speaks plain HTTP/1.1, as a local OpenAI-compatible server
// does, so every model call holds a connection of its own. With -fake-tls
// it serves HTTPS with a fresh self-signed certificate, which the started
// server trusts as its only root (SSL_CERT_FILE), and HTTP/2, as
// api.openai.com does: concurrent calls then share a few connections, which
// changes what an open stream costs.
//
// Each dialog gets -turns-per-dialog messages, then the worker starts a new
// one, so histories stay the length of a real conversation; creating the
// dialog is not part of a turn's latency but is part of the wall time.
package main
