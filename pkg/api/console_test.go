package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// wantAPIError fails unless err is an API error with status and, when
// given, a detail at pointer.
func wantAPIError(t *testing.T, err error, status int, pointer string) {
	t.Helper()
	var ae *apiclient.Error
	if !errors.As(err, &ae) || ae.Status != status {
		t.Fatalf("error %v; want status %d", err, status)
	}
	if pointer == "" {
		return
	}
	for _, d := range ae.Details {
		if d.Pointer == pointer {
			return
		}
	}
	t.Fatalf("error %+v has no detail at %s", ae, pointer)
}

// TestTheConsoleFindsRatesAndChartsDialogs: an end user rates a reply from
// the widget's key; an admin finds the dialog by a word of it and by its
// feedback, sees the rating and the failed tool call in the transcript,
// and the day's activity counts all of it.
func TestTheConsoleFindsRatesAndChartsDialogs(t *testing.T) {
	t.Parallel()
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		admin := e.client(e.key)
		pk, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "shop",
			platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", pk.Key, `{}`, "Origin", site)
		var kettle apiclient.Dialog
		if err := json.Unmarshal([]byte(r.body), &kettle); err != nil || r.StatusCode != http.StatusCreated {
			t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
		}
		// The model calls lookup_order without its required argument: a
		// failed tool call, which it shrugs off.
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "lookup_order", Arguments: `{}`}}},
			llmtest.ServerReply{Text: "Refunds for a **kettle** take five days."})
		r = e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+kettle.ID+"/messages", pk.Key, `{"text":"my kettle broke"}`, "Origin", site)
		var turn apiclient.Turn
		if err := json.Unmarshal([]byte(r.body), &turn); err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("send: %d %s", r.StatusCode, r.body)
		}
		var reply, user string
		for _, m := range turn.Messages {
			if m.Kind == "assistant" && strings.Contains(m.Text, "five days") {
				reply = m.ID
			}
		}
		other, err := admin.CreateDialog(ctx, "shop", "helper", apiclient.CreateDialogRequest{UserID: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{Text: "Parcels ship on Monday."})
		t2, err := admin.SendMessage(ctx, "shop", other.ID, "where is my parcel")
		if err != nil {
			t.Fatal(err)
		}
		otherReply := t2.Messages[len(t2.Messages)-1].ID
		for _, m := range t2.Messages {
			if m.Kind == "user" {
				user = m.ID
			}
		}
		feedback := func(dialog, message, body, origin string) rawResponse {
			return e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+dialog+"/messages/"+message+"/feedback", pk.Key, body, "Origin", origin)
		}

		t.Run("the widget's key rates a reply and may change its mind", func(t *testing.T) {
			if r := feedback(kettle.ID, reply, `{"rating":"down","comment":"too slow"}`, site); r.StatusCode != http.StatusOK {
				t.Fatalf("rate down: %d %s", r.StatusCode, r.body)
			}
			r := feedback(kettle.ID, reply, `{"rating":"up"}`, site)
			var f apiclient.Feedback
			if err := json.Unmarshal([]byte(r.body), &f); err != nil || r.StatusCode != http.StatusOK || f.Rating != "up" || f.Comment != "" {
				t.Fatalf("rate up: %d %s", r.StatusCode, r.body)
			}
			m := e.raw(t, "GET", "/metrics", "", "").body
			for _, want := range []string{`parley_feedback_total{rating="down"} 1`, `parley_feedback_total{rating="up"} 1`} {
				if !strings.Contains(m, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
		t.Run("feedback goes only on the dialog's own replies, from the key's origins", func(t *testing.T) {
			for name, c := range map[string]struct {
				dialog, message, body, origin string
				status                        int
			}{
				"another dialog's reply":  {kettle.ID, otherReply, `{"rating":"up"}`, site, http.StatusNotFound},
				"a user message":          {other.ID, user, `{"rating":"up"}`, site, http.StatusNotFound},
				"a rating not up or down": {kettle.ID, reply, `{"rating":"meh"}`, site, http.StatusUnprocessableEntity},
				"another origin":          {kettle.ID, reply, `{"rating":"up"}`, "https://evil.example", http.StatusForbidden},
			} {
				if r := feedback(c.dialog, c.message, c.body, c.origin); r.StatusCode != c.status {
					t.Errorf("%s: %d %s; want %d", name, r.StatusCode, r.body, c.status)
				}
			}
		})
		t.Run("the admin's transcript shows the rating and the failed tool call", func(t *testing.T) {
			dd, err := admin.GetDialog(ctx, "shop", kettle.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(dd.Feedback) != 1 || dd.Feedback[0].MessageID != reply || dd.Feedback[0].Rating != "up" {
				t.Errorf("feedback %+v", dd.Feedback)
			}
			if len(dd.ToolCalls) != 1 || !dd.ToolCalls[0].IsError {
				t.Errorf("tool calls %+v", dd.ToolCalls)
			}
		})
		t.Run("a word of the dialog finds it, with a snippet and counts", func(t *testing.T) {
			got, err := admin.SearchDialogs(ctx, "shop", apiclient.DialogQuery{Q: "KETTLE"})
			if err != nil || len(got.Dialogs) != 1 || got.Dialogs[0].ID != kettle.ID {
				t.Fatalf("search: %+v, %v", got, err)
			}
			s := got.Dialogs[0].Summary
			if s == nil || s.Snippet != "my kettle broke" || s.Messages != 3 || s.ToolErrors != 1 || s.FeedbackUp != 1 {
				t.Errorf("summary %+v", s)
			}
		})
		t.Run("filters by end user and feedback narrow the list", func(t *testing.T) {
			for q, want := range map[apiclient.DialogQuery]string{
				{UserID: "ann"}: other.ID, {Feedback: "up"}: kettle.ID, {Feedback: "none", Q: "parcel"}: other.ID,
			} {
				got, err := admin.SearchDialogs(ctx, "shop", q)
				if err != nil || len(got.Dialogs) != 1 || got.Dialogs[0].ID != want {
					t.Errorf("%+v: %+v, %v", q, got, err)
				}
			}
			_, err := admin.SearchDialogs(ctx, "shop", apiclient.DialogQuery{Feedback: "meh"})
			wantAPIError(t, err, http.StatusUnprocessableEntity, "/feedback")
		})
		t.Run("an export found by a word carries the end user's feedback", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/export?q=kettle", e.key, "")
			lines := strings.Split(strings.TrimSpace(r.body), "\n")
			var dd apiclient.DialogDetail
			if r.StatusCode != http.StatusOK || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &dd) != nil {
				t.Fatalf("export: %d %s", r.StatusCode, r.body)
			}
			if dd.ID != kettle.ID || len(dd.Feedback) != 1 || dd.Feedback[0].Rating != "up" {
				t.Errorf("exported %s with feedback %+v", dd.ID, dd.Feedback)
			}
		})
		t.Run("the day's activity counts dialogs, end users, messages, tool errors and feedback", func(t *testing.T) {
			today := time.Now().UTC().Format("2006-01-02")
			rep, err := admin.Activity(ctx, "shop", "", "", "helper")
			if err != nil || len(rep.Days) != 30 || rep.To != today {
				t.Fatalf("activity %+v, %v", rep, err)
			}
			d := rep.Days[29]
			// kettle: user, tool call, reply; parcel: user, reply. The
			// widget's visitor is an end user of their own.
			if d.Dialogs != 2 || d.EndUsers != 2 || d.Messages != 5 || d.ToolErrors != 1 || d.FeedbackUp != 1 || d.InputTokens == 0 {
				t.Errorf("today %+v", d)
			}
			_, err = admin.Activity(ctx, "shop", "2030-02-01", "2030-01-01", "")
			wantAPIError(t, err, http.StatusUnprocessableEntity, "/to")
		})
		t.Run("hour by hour, the last 24 UTC hours count the same activity", func(t *testing.T) {
			before := time.Now().UTC().Format("2006-01-02T15")
			rep, err := admin.ActivityBy(ctx, "shop", apiclient.ActivityQuery{Bot: "helper", Bucket: "hour"})
			after := time.Now().UTC().Format("2006-01-02T15")
			if err != nil || rep.Bucket != "hour" || len(rep.Days) != 24 || (rep.To != before && rep.To != after) {
				t.Fatalf("activity %+v, %v", rep, err)
			}
			var sum apiclient.ActivityDay
			for i, d := range rep.Days {
				if d.Hour[:10] != d.Day || (i > 0 && d.Hour <= rep.Days[i-1].Hour) {
					t.Errorf("bucket %d is hour %q of day %q", i, d.Hour, d.Day)
				}
				sum.Dialogs, sum.Messages, sum.ToolErrors, sum.FeedbackUp = sum.Dialogs+d.Dialogs, sum.Messages+d.Messages, sum.ToolErrors+d.ToolErrors, sum.FeedbackUp+d.FeedbackUp
			}
			if rep.Days[23].Hour != rep.To || sum.Dialogs != 2 || sum.Messages != 5 || sum.ToolErrors != 1 || sum.FeedbackUp != 1 {
				t.Errorf("the last hours add up to %+v, ending %s", sum, rep.Days[23].Hour)
			}
			rep, err = admin.ActivityBy(ctx, "shop", apiclient.ActivityQuery{From: "2030-01-01T22", To: "2030-01-02", Bucket: "hour"})
			if err != nil || len(rep.Days) != 26 || rep.From != "2030-01-01T22" || rep.To != "2030-01-02T23" {
				t.Errorf("from an hour to a whole day: %+v, %v", rep, err)
			}
		})
		t.Run("a bucket other than day or hour, or too many hours, is refused at its parameter", func(t *testing.T) {
			_, err := admin.ActivityBy(ctx, "shop", apiclient.ActivityQuery{Bucket: "week"})
			wantAPIError(t, err, http.StatusUnprocessableEntity, "/bucket")
			_, err = admin.ActivityBy(ctx, "shop", apiclient.ActivityQuery{From: "2030-01-01", To: "2030-01-10", Bucket: "hour"})
			wantAPIError(t, err, http.StatusUnprocessableEntity, "/from")
			_, err = admin.ActivityBy(ctx, "shop", apiclient.ActivityQuery{To: "2030-01-01T24", Bucket: "hour"})
			wantAPIError(t, err, http.StatusUnprocessableEntity, "/to")
		})
	})
}
