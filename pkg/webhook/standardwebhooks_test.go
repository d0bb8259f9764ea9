package webhook_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/webhook"
)

// receiverModules finds where .ci/install-webhooks.sh installed the
// official standardwebhooks package, or skips.
func receiverModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping the standardwebhooks receiver test")
	}
	dir, _ := os.Getwd()
	for {
		mods := filepath.Join(dir, ".ci", "node-webhooks", "node_modules")
		if _, err := os.Stat(filepath.Join(mods, "standardwebhooks", "package.json")); err == nil {
			return mods
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	t.Skip("the standardwebhooks npm package is not installed: run .ci/install-webhooks.sh")
	return ""
}

// startReceiver runs testdata/receiver.js with these secrets and returns
// its base URL.
func startReceiver(t *testing.T, secrets ...string) string {
	t.Helper()
	mods := receiverModules(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "testdata/receiver.js")
	cmd.Args = append(cmd.Args, secrets...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("receiver did not start: %v", err)
	}
	return "http://127.0.0.1:" + strings.TrimSpace(line)
}

func mustSecret(t *testing.T) (string, []byte) {
	t.Helper()
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	k, err := webhook.SecretKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, k
}

// TestTheOfficialLibraryVerifiesParleysSignatures sends real messages
// with Send to a receiver that checks them with the standardwebhooks
// package from npm, as a tenant's backend would.
func TestTheOfficialLibraryVerifiesParleysSignatures(t *testing.T) {
	current, currentKey := mustSecret(t)
	previous, previousKey := mustSecret(t)
	stranger, _ := mustSecret(t)
	base := startReceiver(t, current, previous, stranger)
	body, err := webhook.Body(webhook.MessageCreated, "acme", time.Now(), map[string]any{"text": "héllo \u2028 <b>"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		secret int      // which receiver secret verifies
		keys   [][]byte // what Parley signs with
		want   int
	}{
		{"a message signed with the endpoint's secret verifies", 0, [][]byte{currentKey}, http.StatusNoContent},
		{"during a rotation a receiver still on the previous secret verifies", 1, [][]byte{currentKey, previousKey}, http.StatusNoContent},
		{"during a rotation a receiver already on the new secret verifies", 0, [][]byte{currentKey, previousKey}, http.StatusNoContent},
		{"after the overlap a receiver on the previous secret is refused", 1, [][]byte{currentKey}, http.StatusUnauthorized},
		{"a receiver with another secret is refused", 2, [][]byte{currentKey, previousKey}, http.StatusUnauthorized},
	}
	client := &http.Client{}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := fmt.Sprintf("%s/hook?secret=%d", base, tc.secret)
			res := webhook.Send(context.Background(), client, webhook.Message{ID: fmt.Sprintf("evt_%d", i), URL: url, Body: body, Keys: tc.keys}, 0, time.Now)
			if res.Status != tc.want {
				t.Fatalf("receiver answered %d (%s), want %d", res.Status, res.Excerpt, tc.want)
			}
		})
	}
	t.Run("a body changed after signing is refused", func(t *testing.T) {
		h := webhook.Sign("evt_x", time.Now(), body, currentKey)
		req, _ := http.NewRequest(http.MethodPost, base+"/hook?secret=0", strings.NewReader(strings.Replace(string(body), "acme", "evil", 1)))
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("receiver answered %d to a tampered body, want 401", resp.StatusCode)
		}
	})
}
