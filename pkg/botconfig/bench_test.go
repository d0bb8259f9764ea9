package botconfig

import (
	"os"
	"testing"
)

func benchConfig(b *testing.B) []byte {
	data, err := os.ReadFile("../../tenants/acme-outdoor/bots/support.json")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkLoad is a full strict load: syntax, schema and semantic checks.
func BenchmarkLoad(b *testing.B) {
	data := benchConfig(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Load(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	cfg := mustLoad(b, string(benchConfig(b)))
	for b.Loop() {
		if _, err := Compile(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender is the per-tool-call cost.
func BenchmarkRender(b *testing.B) {
	bot := mustCompile(b, string(benchConfig(b)))
	tmpl := bot.Tools[1].Endpoint
	args := []byte(`{"email": "kim@example.net", "name": "Kim", "topic": "demo", "seats": 4}`)
	vars := Vars{"secrets.crm_token": "t0ken", "channel": "widget", "dialog_id": "dlg_1", "tenant_id": "ten_1", "customer_tier": "gold"}
	for b.Loop() {
		if _, err := tmpl.Render(args, vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrompt(b *testing.B) {
	bot := mustCompile(b, string(benchConfig(b)))
	vars := Vars{"customer_tier": "gold"}
	for b.Loop() {
		_ = bot.Prompt(vars)
	}
}
