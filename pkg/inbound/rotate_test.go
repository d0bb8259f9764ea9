package inbound_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// postSigned posts a webhook-channel message signed with secret and
// returns the status.
func (w *world) postSigned(t *testing.T, channelID, secret, deliveryID string) int {
	t.Helper()
	key, err := webhook.SecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := genericBody("conv-rotate", "u1", "hello", false)
	resp, _ := w.post(t, channelID, webhook.Sign(deliveryID, time.Now(), body, key), body)
	return resp.StatusCode
}

func TestRotatingAChannelsSecretKeepsThePreviousOneForTheOverlap(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		w.llm.Add(llmtest.Text("ok"))
		w.llm.Cycle = true
		c := w.client()

		t.Run("a webhook channel gets a new whsec_ secret, and the old one still signs", func(t *testing.T) {
			ch := w.webhookChannel(t)
			rotated, err := c.RotateChannelSecret(ctx, "shop", ch.ID, apiclient.RotateChannelSecretRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(rotated.Secret, webhook.SecretPrefix) || rotated.Secret == ch.Secret || rotated.PreviousSecretExpiresAt == nil {
				t.Fatalf("rotated %+v, want a new whsec_ secret and the overlap's end", rotated)
			}
			for i, secret := range []string{rotated.Secret, ch.Secret} {
				if got := w.postSigned(t, ch.ID, secret, "msg_rot"+string(rune('a'+i))); got != http.StatusOK {
					t.Fatalf("signed with secret %d: %d, want 200", i, got)
				}
			}
			if got := w.postSigned(t, ch.ID, "whsec_"+strings.Repeat("QUJD", 8), "msg_rotc"); got != http.StatusUnauthorized {
				t.Fatalf("signed with another secret: %d, want 401", got)
			}
			read, err := c.GetChannel(ctx, "shop", ch.ID)
			if err != nil || read.PreviousSecretExpiresAt == nil {
				t.Fatalf("the channel reads %+v, %v; want the overlap's end", read, err)
			}
		})

		t.Run("after the overlap only the newest secret signs", func(t *testing.T) {
			ch := w.webhookChannel(t)
			w.clock.Advance(-(platform.RotationOverlap + time.Hour)) // a rotation a day and an hour ago
			rotated, err := c.RotateChannelSecret(ctx, "shop", ch.ID, apiclient.RotateChannelSecretRequest{})
			w.clock.Advance(platform.RotationOverlap + time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.postSigned(t, ch.ID, ch.Secret, "msg_rotd"); got != http.StatusUnauthorized {
				t.Fatalf("signed with the expired secret: %d, want 401", got)
			}
			if got := w.postSigned(t, ch.ID, rotated.Secret, "msg_rote"); got != http.StatusOK {
				t.Fatalf("signed with the new secret: %d, want 200", got)
			}
		})

		t.Run("a telegram channel's new token is registered with setWebhook; the old one is still accepted", func(t *testing.T) {
			w.secret(t, "TELEGRAM_TOKEN", w.telegram.token)
			ch, err := c.CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "telegram", Bot: "helper",
				Secrets: map[string]string{"bot_token": "TELEGRAM_TOKEN"}})
			if err != nil {
				t.Fatal(err)
			}
			rotated, err := c.RotateChannelSecret(ctx, "shop", ch.ID, apiclient.RotateChannelSecretRequest{})
			if err != nil {
				t.Fatal(err)
			}
			w.telegram.mu.Lock()
			hooks := append([]tgWebhook(nil), w.telegram.hooks...)
			w.telegram.mu.Unlock()
			if len(hooks) == 0 || hooks[len(hooks)-1].SecretToken != rotated.Secret || rotated.Secret == ch.Secret || hooks[len(hooks)-1].URL != ch.InboundURL {
				t.Fatalf("setWebhook calls %+v after rotating to %q, want the new token at %s", hooks, rotated.Secret, ch.InboundURL)
			}
			for i, token := range []string{rotated.Secret, ch.Secret} {
				resp, _ := w.post(t, ch.ID, http.Header{"X-Telegram-Bot-Api-Secret-Token": {token}}, telegramUpdate(int64(3001+i), 4242, 77, false, "hi"))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("an update with token %d: %d, want 200", i, resp.StatusCode)
				}
			}
			w.settle(t)
		})

		t.Run("a slack channel takes Slack's new signing secret; the old one signs for the overlap", func(t *testing.T) {
			ch := w.slackChannel(t)
			_, err := c.RotateChannelSecret(ctx, "shop", ch.ID, apiclient.RotateChannelSecretRequest{})
			var apiErr *apiclient.Error
			if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || len(apiErr.Details) != 1 || apiErr.Details[0].Pointer != "/secret" {
				t.Fatalf("rotating a slack channel without the new signing secret: %v, want 422 at /secret", err)
			}
			const newSigning = "0b2a6c0ffee4d1e5ab5ab5ab5ab5ab5a"
			rotated, err := c.RotateChannelSecret(ctx, "shop", ch.ID, apiclient.RotateChannelSecretRequest{Secret: newSigning})
			if err != nil || rotated.Secret != "" {
				t.Fatalf("rotated %+v, %v; want no secret shown (Slack's own)", rotated, err)
			}
			for i, tc := range []struct {
				secret string
				want   int
			}{{newSigning, http.StatusOK}, {slackSigningSecret, http.StatusOK}, {"another-signing-secret", http.StatusUnauthorized}} {
				body := slackEvent("EvRot"+string(rune('a'+i)), map[string]any{"user": "U1", "text": "hi", "channel": "C5", "ts": "1700000005.00010" + string(rune('0'+i))})
				if resp, _ := w.post(t, ch.ID, slackHeaders(tc.secret, time.Now(), body), body); resp.StatusCode != tc.want {
					t.Fatalf("signed with secret %d: %d, want %d", i, resp.StatusCode, tc.want)
				}
			}
			w.settle(t)
			var n int64
			if err := w.st.DB().Model(&store.ChannelJob{}).Count(&n).Error; err != nil || n != 0 {
				t.Fatalf("%d jobs left, %v", n, err)
			}
		})
	})
}
