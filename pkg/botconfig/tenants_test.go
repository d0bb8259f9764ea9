package botconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The example tenants are documentation; this keeps them valid.
func TestExampleTenantBotsAreValid(t *testing.T) {
	bots, err := filepath.Glob("../../tenants/*/bots/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(bots) < 3 {
		t.Fatalf("found %d example bots, want at least 3", len(bots))
	}
	for _, path := range bots {
		t.Run(path, func(t *testing.T) {
			cfg, err := LoadFile(path)
			if err != nil {
				t.Fatalf("%s:\n%v", path, err)
			}
			if _, err := Compile(cfg); err != nil {
				t.Fatalf("%s:\n%v", path, err)
			}
		})
	}
}

func TestExampleTenantsHaveATenantFile(t *testing.T) {
	dirs, err := filepath.Glob("../../tenants/*/bots")
	if err != nil || len(dirs) < 2 {
		t.Fatalf("found %d example tenants, want at least 2 (%v)", len(dirs), err)
	}
	for _, d := range dirs {
		path := filepath.Join(filepath.Dir(d), "tenant.json")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tenant struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(data, &tenant); err != nil || tenant.Name == "" {
			t.Fatalf("%s: want {\"name\": ...}, got %s (%v)", path, data, err)
		}
	}
}

// The support bot must render its CRM call the way the CRM expects.
func TestExampleSupportBotRendersItsCRMCall(t *testing.T) {
	data, err := os.ReadFile("../../tenants/acme-outdoor/bots/support.json")
	if err != nil {
		t.Fatal(err)
	}
	b := mustCompile(t, string(data))
	req, err := b.Tools[1].Endpoint.Render([]byte(`{"email": "kim@example.net", "topic": "bulk_quote", "seats": 12}`),
		Vars{"secrets.crm_token": "crm-secret", "channel": "widget", "dialog_id": "dlg_7", "tenant_id": "ten_acme"})
	if err != nil {
		t.Fatal(err)
	}
	wantBody := `{"email":"kim@example.net","seats":12,"note":"Requested bulk_quote via the Acme chatbot","dialogId":"dlg_7","tenantId":"ten_acme","customer_tier":"standard"}`
	if req.Method != "POST" || req.URL != "https://crm.example.com/api/contacts?source=widget" || string(req.Body) != wantBody ||
		req.Header.Get("Authorization") != "Bearer crm-secret" {
		t.Fatalf("request = %s %s %v\n%s", req.Method, req.URL, req.Header, req.Body)
	}
}
