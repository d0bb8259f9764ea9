package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/dialog"
)

func TestLoadSettingsReadsLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      parleyEnv
		want     dialog.Limits
		wantTTL  time.Duration
		wantFail string // part of the error, "" when the settings are valid
	}{
		{name: "no settings give the production defaults",
			env:     parleyEnv{},
			want:    dialog.Limits{TenantRate: 20, TenantBurst: 40, KeyRate: 10, KeyBurst: 20},
			wantTTL: time.Minute},
		{name: "a rate per minute is converted to per second with a second's worth of burst",
			env:  parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "1200/m", "PARLEY_RATE_LIMIT_KEY": "off"},
			want: dialog.Limits{TenantRate: 20, TenantBurst: 20}, wantTTL: time.Minute},
		{name: "a slow hourly rate still allows one request at once",
			env:  parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "0", "PARLEY_RATE_LIMIT_KEY": "36/h"},
			want: dialog.Limits{KeyRate: 0.01, KeyBurst: 1}, wantTTL: time.Minute},
		{name: "an explicit burst, spaces and capitals are accepted",
			env:  parleyEnv{"PARLEY_RATE_LIMIT_TENANT": " 5/S, burst=12 ", "PARLEY_RATE_LIMIT_KEY": "OFF"},
			want: dialog.Limits{TenantRate: 5, TenantBurst: 12}, wantTTL: time.Minute},
		{name: "a quota with a suffix and a short lease",
			env: parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "off", "PARLEY_RATE_LIMIT_KEY": "off",
				"PARLEY_DAILY_TOKEN_QUOTA": "2M", "PARLEY_DIALOG_LEASE_TTL": "1s"},
			want: dialog.Limits{DailyTokens: 2_000_000}, wantTTL: time.Second},
		{name: "a plain quota of 500k tokens",
			env:  parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "off", "PARLEY_RATE_LIMIT_KEY": "off", "PARLEY_DAILY_TOKEN_QUOTA": "500k"},
			want: dialog.Limits{DailyTokens: 500_000}, wantTTL: time.Minute},
		{name: "a rate without a unit is refused", env: parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "20"},
			wantFail: `PARLEY_RATE_LIMIT_TENANT: "20" is not a rate`},
		{name: "a rate per day is refused", env: parleyEnv{"PARLEY_RATE_LIMIT_KEY": "100/d"},
			wantFail: `PARLEY_RATE_LIMIT_KEY: "100/d" is not a rate`},
		{name: "a negative rate is refused", env: parleyEnv{"PARLEY_RATE_LIMIT_KEY": "-1/s"},
			wantFail: "PARLEY_RATE_LIMIT_KEY"},
		{name: "a burst of zero is refused", env: parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "5/s,burst=0"},
			wantFail: "PARLEY_RATE_LIMIT_TENANT"},
		{name: "a burst without its name is refused", env: parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "5/s,10"},
			wantFail: "PARLEY_RATE_LIMIT_TENANT"},
		{name: "a negative quota is refused", env: parleyEnv{"PARLEY_DAILY_TOKEN_QUOTA": "-5"},
			wantFail: `PARLEY_DAILY_TOKEN_QUOTA: "-5" is not a token count`},
		{name: "a quota that overflows is refused", env: parleyEnv{"PARLEY_DAILY_TOKEN_QUOTA": "99999999999999999G"},
			wantFail: "PARLEY_DAILY_TOKEN_QUOTA"},
		{name: "a lease of a few milliseconds is refused", env: parleyEnv{"PARLEY_DIALOG_LEASE_TTL": "10ms"},
			wantFail: `PARLEY_DIALOG_LEASE_TTL: "10ms" is not a duration from 1s to 1h0m0s`},
		{name: "a lease without a unit is refused", env: parleyEnv{"PARLEY_DIALOG_LEASE_TTL": "60"},
			wantFail: "PARLEY_DIALOG_LEASE_TTL"},
		{name: "a stream limit per tenant",
			env:  parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "off", "PARLEY_RATE_LIMIT_KEY": "off", "PARLEY_STREAM_LIMIT_TENANT": "8"},
			want: dialog.Limits{TenantStreams: 8}, wantTTL: time.Minute},
		{name: "a negative stream limit is refused", env: parleyEnv{"PARLEY_STREAM_LIMIT_TENANT": "-1"},
			wantFail: `PARLEY_STREAM_LIMIT_TENANT: "-1" is not a number of replies`},
		{name: "a Redis URL of another scheme is refused, without repeating it (it may hold a password)",
			env:      parleyEnv{"PARLEY_REDIS_URL": "http://user:hunter2@cache:6379"},
			wantFail: "PARLEY_REDIS_URL: must start with redis:// or rediss://"},
		{name: "a Redis failure mode that is neither open nor closed is refused", env: parleyEnv{"PARLEY_REDIS_FAIL": "retry"},
			wantFail: `PARLEY_REDIS_FAIL: "retry" is not open or closed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSettings(tt.env.getenv)
			if tt.wantFail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantFail) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantFail)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("the error repeats a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Limits != tt.want || s.LeaseTTL != tt.wantTTL {
				t.Fatalf("limits %+v, lease %s; want %+v, %s", s.Limits, s.LeaseTTL, tt.want, tt.wantTTL)
			}
		})
	}
}

func TestEverySettingIsListedByHelpAndTheREADME(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	printSettings(&help)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, s := range settingsTable {
		if !strings.Contains(help.String(), s.name) {
			t.Errorf("parley serve --help does not list %s", s.name)
		}
		if !strings.Contains(readme, "| `"+s.name+"` |") {
			t.Errorf("the README's settings table has no row for %s", s.name)
		}
	}
}

func TestLoadSettingsReadsThePlatformAPIURLs(t *testing.T) {
	t.Parallel()
	s, err := LoadSettings(parleyEnv{"PARLEY_TELEGRAM_API_URL": "http://tg.internal:8081"}.getenv)
	if err != nil || s.TelegramAPI != "http://tg.internal:8081" || s.SlackAPI != "https://slack.com/api" {
		t.Fatalf("settings %q %q, %v; want the Telegram server given and Slack's default", s.TelegramAPI, s.SlackAPI, err)
	}
	for _, env := range []parleyEnv{{"PARLEY_TELEGRAM_API_URL": "api.telegram.org"}, {"PARLEY_SLACK_API_URL": "ftp://slack.com/api"}} {
		if _, err := LoadSettings(env.getenv); err == nil || !strings.Contains(err.Error(), "is not an absolute http(s) URL") {
			t.Errorf("%v: err %v, want it refused", env, err)
		}
	}
}

// PARLEY_WEBHOOK_TIMEOUT bounds one webhook attempt: 15 s unless set, and a
// value outside 1s to 1m is refused with the setting's name.
func TestLoadSettingsReadsPARLEY_WEBHOOK_TIMEOUT(t *testing.T) {
	for value, want := range map[string]time.Duration{"": 15 * time.Second, "2s": 2 * time.Second, "1m": time.Minute} {
		s, err := LoadSettings(parleyEnv{"PARLEY_WEBHOOK_TIMEOUT": value}.getenv)
		if err != nil || s.WebhookTimeout != want {
			t.Errorf("PARLEY_WEBHOOK_TIMEOUT=%q: %v, %v; want %v", value, s.WebhookTimeout, err, want)
		}
	}
	for _, value := range []string{"0s", "500ms", "2m", "soon"} {
		if _, err := LoadSettings(parleyEnv{"PARLEY_WEBHOOK_TIMEOUT": value}.getenv); err == nil || !strings.Contains(err.Error(), "PARLEY_WEBHOOK_TIMEOUT") {
			t.Errorf("PARLEY_WEBHOOK_TIMEOUT=%q: %v; want an error naming the setting", value, err)
		}
	}
}
