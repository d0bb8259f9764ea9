package anthropic_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func TestAnImageGoesAsABase64ImageBlockTheStrictFakeAccepts(t *testing.T) {
	p, s := newProvider(t)
	s.Enqueue(llmtest.ServerReply{Text: "A red dot."})
	req := request(llm.UserMessage("What is this?", llm.Image{MediaType: "image/png", Data: pixel}))
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	blocks := s.LastMessages().Messages[0].Content
	if len(blocks) != 2 || blocks[1].Type != "image" || blocks[1].Source == nil || blocks[1].Source.MediaType != "image/png" ||
		blocks[1].Source.Data != base64.StdEncoding.EncodeToString(pixel) {
		t.Fatalf("blocks %+v", blocks)
	}
}

func TestTheStrictFakeRefusesAnImageOfATypeTheAPIRefuses(t *testing.T) {
	p, _ := newProvider(t)
	req := request(llm.UserMessage("What is this?", llm.Image{MediaType: "image/tiff", Data: pixel}))
	if _, err := p.Stream(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "media_type") {
		t.Fatalf("err = %v, want the API's refusal of the media type", err)
	}
}
