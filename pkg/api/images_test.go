package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// pixel is a 1x1 PNG.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// sendImages posts text with images to dialog d and returns the response.
func (e *chatEnv) sendImages(t *testing.T, d, text string, images ...apiclient.ImageInput) rawResponse {
	t.Helper()
	body, err := json.Marshal(apiclient.SendMessageRequest{Text: text, Images: images})
	if err != nil {
		t.Fatal(err)
	}
	return e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, string(body))
}

// problem is the first detail of a 422.
func problem(t *testing.T, r rawResponse) (string, string) {
	t.Helper()
	var body struct {
		Error apiclient.Error `json:"error"`
	}
	if r.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal([]byte(r.body), &body) != nil || len(body.Error.Details) == 0 {
		t.Fatalf("want a 422 with details, got %d %s", r.StatusCode, r.body)
	}
	return body.Error.Details[0].Pointer, body.Error.Details[0].Message
}

func TestAUserSendsAnImageTheModelSees(t *testing.T) {
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.publish(t, "seeing", `{"basic_settings": {"name": "Eyes"}, "llm": {"model": "gpt-4o-mini"}}`)
		dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pixel)

		t.Run("uploaded as base64, it reaches the model as an image_url part", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "A dot."})
			if r := e.sendImages(t, d, "what is this?", apiclient.ImageInput{Data: pixel}); r.StatusCode != http.StatusOK {
				t.Fatalf("send: %d %s", r.StatusCode, r.body)
			}
			user := e.llm.LastRequest().Messages[1]
			if urls := user.ImageURLs(); user.Role != "user" || user.Text() != "what is this?" || len(urls) != 1 || urls[0] != dataURL {
				t.Fatalf("the model got %s", user.Content)
			}
		})
		t.Run("the dialog shows the image's type and size, not its bytes", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d, e.key, "")
			if !strings.Contains(r.body, `"media_type":"image/png"`) || !strings.Contains(r.body, fmt.Sprintf(`"size":%d`, len(pixel))) || strings.Contains(r.body, "iVBORw0KGgo") {
				t.Fatalf("dialog %s", r.body)
			}
		})
		t.Run("the next turn sends the image again, from the stored message", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "Still a dot."})
			e.send(t, d, "and now?")
			if urls := e.llm.LastRequest().Messages[1].ImageURLs(); len(urls) != 1 || urls[0] != dataURL {
				t.Fatalf("history lost the image: %v", urls)
			}
		})
		t.Run("a URL is fetched through the outbound policy", func(t *testing.T) {
			site := e.shop.URL // the shop's server is the one address the policy lets through
			e.llm.Enqueue(llmtest.ServerReply{Text: "Seen."})
			if r := e.sendImages(t, d, "look", apiclient.ImageInput{URL: site + "/pixel.png"}); r.StatusCode != http.StatusOK {
				t.Fatalf("send: %d %s", r.StatusCode, r.body)
			}
			msgs := e.llm.LastRequest().Messages
			if urls := msgs[len(msgs)-1].ImageURLs(); len(urls) != 1 || !strings.HasPrefix(urls[0], "data:image/") {
				t.Fatalf("the model got %v", urls)
			}
		})
		t.Run("a WebP image, lossy or lossless, is accepted", func(t *testing.T) {
			for _, webp := range []string{
				"UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA", // 1x1 lossy
				"UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",         // 1x1 lossless
			} {
				data, _ := base64.StdEncoding.DecodeString(webp)
				e.llm.Enqueue(llmtest.ServerReply{Text: "A dot."})
				if r := e.sendImages(t, d, "and this?", apiclient.ImageInput{Data: data}); r.StatusCode != http.StatusOK {
					t.Fatalf("send: %d %s", r.StatusCode, r.body)
				}
			}
		})
		refusals := []struct {
			name, pointer, message string
			image                  apiclient.ImageInput
		}{
			{"text that is not an image", "/images/0", "is not a PNG, JPEG, GIF or WebP", apiclient.ImageInput{Data: []byte("hello, I am text")}},
			{"a URL the outbound policy denies", "/images/0/url", "not allowed", apiclient.ImageInput{URL: "http://169.254.169.254/latest/meta-data/x.png"}},
			{"a URL that is not http", "/images/0/url", "http or https", apiclient.ImageInput{URL: "file:///etc/passwd"}},
			{"neither data nor url", "/images/0", "one of the two", apiclient.ImageInput{}},
			// A type's first bytes followed by anything else: the header
			// must decode, with its dimensions.
			{"a PNG signature followed by junk", "/images/0", "header", apiclient.ImageInput{Data: append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("junk"), 16)...)}},
			{"a JPEG start followed by junk", "/images/0", "header", apiclient.ImageInput{Data: append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte("junk"), 16)...)}},
			{"a WebP signature followed by junk", "/images/0", "header", apiclient.ImageInput{Data: append([]byte("RIFF\x44\x00\x00\x00WEBPVP8 "), bytes.Repeat([]byte("junk"), 16)...)}},
			{"a GIF of no pixels", "/images/0", "0x0", apiclient.ImageInput{Data: append([]byte("GIF89a\x00\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte("junk"), 16)...)}},
			{"an image over the size limit", "/images/0", "at most 5242880", apiclient.ImageInput{Data: append(bytes.Clone(pixel), make([]byte, dialog.DefaultMaxImageBytes)...)}},
		}
		for _, tc := range refusals {
			t.Run(tc.name+" is refused with its pointer", func(t *testing.T) {
				before := len(e.llm.Requests())
				pointer, message := problem(t, e.sendImages(t, d, "look", tc.image))
				if pointer != tc.pointer || !strings.Contains(message, tc.message) {
					t.Fatalf("problem at %s: %s; want %s mentioning %q", pointer, message, tc.pointer, tc.message)
				}
				if len(e.llm.Requests()) != before {
					t.Fatal("the model was asked anyway")
				}
			})
		}
		t.Run("more than four images are refused", func(t *testing.T) {
			five := make([]apiclient.ImageInput, 5)
			for i := range five {
				five[i] = apiclient.ImageInput{Data: pixel}
			}
			if pointer, _ := problem(t, e.sendImages(t, d, "look", five...)); pointer != "/images" {
				t.Fatalf("pointer %s", pointer)
			}
		})
	})
}

func TestATextOnlyModelRefusesImagesOrSeesAPlaceholder(t *testing.T) {
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		t.Run("a bot whose model does not read images refuses them before storing anything", func(t *testing.T) {
			d := e.publish(t, "blind", `{"basic_settings": {"name": "Blind"}, "llm": {"model": "gpt-3.5-turbo"}}`)
			pointer, message := problem(t, e.sendImages(t, d, "what is this?", apiclient.ImageInput{Data: pixel}))
			if pointer != "/images" || !strings.Contains(message, "gpt-3.5-turbo does not read images") {
				t.Fatalf("problem at %s: %s", pointer, message)
			}
			if r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d, e.key, ""); strings.Contains(r.body, "what is this?") {
				t.Fatal("the refused message was stored")
			}
		})
		t.Run("llm.images overrides the catalog", func(t *testing.T) {
			d := e.publish(t, "told", `{"basic_settings": {"name": "Told"}, "llm": {"model": "gpt-3.5-turbo", "images": true}}`)
			e.llm.Enqueue(llmtest.ServerReply{Text: "A dot."})
			if r := e.sendImages(t, d, "what is this?", apiclient.ImageInput{Data: pixel}); r.StatusCode != http.StatusOK {
				t.Fatalf("send: %d %s", r.StatusCode, r.body)
			}
		})
		t.Run("a fallback model that does not read images gets a placeholder", func(t *testing.T) {
			d := e.publish(t, "falls", `{"basic_settings": {"name": "Falls"}, "llm": {"model": "gpt-4o-mini", "fallback_models": ["gpt-3.5-turbo"]}}`)
			e.llm.Enqueue(llmtest.ServerReply{Fault: &llmtest.Fault{Status: http.StatusServiceUnavailable, Type: "server_error"}}, llmtest.ServerReply{Text: "I cannot see it."})
			if r := e.sendImages(t, d, "what is this?", apiclient.ImageInput{Data: pixel}); r.StatusCode != http.StatusOK {
				t.Fatalf("send: %d %s", r.StatusCode, r.body)
			}
			last := e.llm.LastRequest()
			user := last.Messages[1]
			if last.Model != "gpt-3.5-turbo" || len(user.ImageURLs()) != 0 || !strings.Contains(user.Text(), "[The user sent an image (image/png, 1 KB); this model cannot see images.") {
				t.Fatalf("the fallback %s got %s", last.Model, user.Content)
			}
		})
	})
}

func TestErasingTheUserOrDeletingTheDialogDeletesTheirImages(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newChatEnv(t, st, dialog.Limits{})
		stored := func() int64 {
			var n int64
			if err := st.DB().Raw("SELECT count(*) FROM messages WHERE content LIKE ?", "%"+base64.StdEncoding.EncodeToString(pixel)[:16]+"%").Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, how := range []string{"the dialog is deleted", "the end user is erased"} {
			t.Run(how, func(t *testing.T) {
				d := e.dialog(t)
				e.llm.Enqueue(llmtest.ServerReply{Text: "A dot."})
				if r := e.sendImages(t, d, "what is this?", apiclient.ImageInput{Data: pixel}); r.StatusCode != http.StatusOK {
					t.Fatalf("send: %d %s", r.StatusCode, r.body)
				}
				if stored() != 1 {
					t.Fatal("the image is not stored with its message")
				}
				path := "/v1/tenants/shop/dialogs/" + d
				if how == "the end user is erased" {
					path = "/v1/tenants/shop/end-users/u1"
				}
				if r := e.raw(t, "DELETE", path, e.key, ""); r.StatusCode/100 != 2 {
					t.Fatalf("delete: %d %s", r.StatusCode, r.body)
				}
				if n := stored(); n != 0 {
					t.Fatalf("%d stored messages still hold the image", n)
				}
			})
		}
	})
}
