package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// get answers GET url with its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestMetricsMoveToTheirOwnAddressWhenOneIsSet: with PARLEY_METRICS_ADDR
// set, /metrics is served there and the public port answers it 404, so
// whoever reaches the API learns nothing of the server's traffic; unset,
// the public port serves it as before.
func TestMetricsMoveToTheirOwnAddressWhenOneIsSet(t *testing.T) {
	t.Run("set, only the metrics address serves them", func(t *testing.T) {
		srv := startParley(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_METRICS_ADDR": "127.0.0.1:0"})
		m := regexp.MustCompile(`Metrics on (http://\S+/metrics)`).FindStringSubmatch(srv.stdout)
		if m == nil {
			t.Fatalf("the start-up lines name no metrics address:\n%s", srv.stdout)
		}
		if code, body := get(t, m[1]); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
			t.Errorf("GET %s: %d\n%.300s", m[1], code, body)
		}
		if code, body := get(t, srv.URL+"/healthz"); code != http.StatusOK {
			t.Errorf("public /healthz: %d %s", code, body)
		}
		if code, body := get(t, srv.URL+"/metrics"); code != http.StatusNotFound || strings.Contains(body, "go_goroutines") {
			t.Errorf("public /metrics: %d\n%.300s; want 404", code, body)
		}
		// What the public port served is counted on the metrics address.
		if _, body := get(t, m[1]); !strings.Contains(body, `parley_http_requests_total{method="GET",route="/healthz",status="2xx"} 1`) {
			t.Errorf("the metrics address does not count the public port's requests:\n%s", body)
		}
	})
	t.Run("unset, the public port serves them", func(t *testing.T) {
		srv := startParley(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir()})
		code, body := get(t, srv.URL+"/metrics")
		if code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
			t.Errorf("public /metrics: %d\n%.300s", code, body)
		}
		// The database pool, whose saturation queues turns: SQLite's is
		// one connection.
		for _, want := range []string{`go_sql_max_open_connections{db_name="parley"} 1`, `go_sql_wait_duration_seconds_total{db_name="parley"}`} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
	t.Run("a malformed address is refused", func(t *testing.T) {
		if _, err := LoadSettings(parleyEnv{"PARLEY_METRICS_ADDR": "nine-thousand"}.getenv); err == nil || !strings.Contains(err.Error(), "PARLEY_METRICS_ADDR") {
			t.Errorf("LoadSettings: %v; want an error naming PARLEY_METRICS_ADDR", err)
		}
	})
	t.Run("serve --help lists the setting", func(t *testing.T) {
		_, _, stderr := runParley(t, parleyEnv{}, "serve", "--help")
		if !strings.Contains(stderr, "PARLEY_METRICS_ADDR") {
			t.Errorf("serve --help:\n%s", stderr)
		}
	})
}
