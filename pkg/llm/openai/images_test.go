package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// pixel is a 1x1 PNG.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func TestAnImageGoesAsAnImageURLPartTheStrictFakeAccepts(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "A red dot."})
	req := userRequest("")
	req.Messages = []llm.Message{llm.UserMessage("What is this?", llm.Image{MediaType: "image/png", Data: pixel})}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	user := s.LastRequest().Messages[1]
	urls := user.ImageURLs()
	if user.Text() != "What is this?" || len(urls) != 1 || !strings.HasPrefix(urls[0], "data:image/png;base64,iVBORw0KGgo") {
		t.Fatalf("user message %s", user.Content)
	}
}

func TestTheStrictFakeRefusesImagesTheAPIRefuses(t *testing.T) {
	p, _ := newProvider(t, llmtest.Options{})
	for _, img := range []llm.Image{{MediaType: "image/tiff", Data: pixel}, {MediaType: "image/png"}} {
		req := userRequest("")
		req.Messages = []llm.Message{llm.UserMessage("What is this?", img)}
		_, err := p.Complete(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "image") {
			t.Errorf("%s of %d bytes: err = %v, want the API's refusal", img.MediaType, len(img.Data), err)
		}
	}
}
