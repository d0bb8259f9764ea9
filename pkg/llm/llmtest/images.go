package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Images as the real APIs check them: OpenAI's image_url content parts and
// Anthropic's image blocks.

// imageTypes are the media types both APIs accept.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// chatPart is one content part of a chat message's content array.
type chatPart struct {
	Type     string `json:"type"`
	Text     *string
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

func (p *chatPart) UnmarshalJSON(b []byte) error {
	type plain struct {
		Type     string           `json:"type"`
		Text     *string          `json:"text"`
		ImageURL *json.RawMessage `json:"image_url"`
	}
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.Type, p.Text = v.Type, v.Text
	if v.ImageURL != nil {
		if err := json.Unmarshal(*v.ImageURL, &p.ImageURL); err != nil {
			return fmt.Errorf("image_url must be an object")
		}
	}
	return nil
}

// checkParts validates message i's content array, if it is one: text parts
// with text, image_url parts (user messages only) with an http(s) or
// base64 data: URL of an accepted type.
func checkParts(i int, m ChatMessage) *apiError {
	var parts []chatPart
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil // a string, or null: contentText judged it
	}
	for j, p := range parts {
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch p.Type {
		case "text":
			if p.Text == nil {
				return invalidRequest(param+".text", "Missing required parameter: '%s.text'.", param)
			}
		case "image_url":
			if m.Role != "user" {
				return invalidRequest(fmt.Sprintf("messages[%d]", i), "Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", m.Role)
			}
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return invalidRequest(param+".image_url.url", "Missing required parameter: '%s.image_url.url'.", param)
			}
			if d := p.ImageURL.Detail; d != "" && d != "auto" && d != "low" && d != "high" {
				return invalidRequest(param+".image_url.detail", "Invalid value: '%s'. Supported values are: 'auto', 'low', and 'high'.", d)
			}
			if err := checkImageURL(p.ImageURL.URL); err != "" {
				return invalidRequest(param+".image_url.url", "Invalid image URL: %s", err)
			}
		default:
			return invalidRequest(param+".type", "Invalid value: '%s'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.", p.Type)
		}
	}
	return nil
}

// checkImageURL says what is wrong with an image_url's url, "" when nothing.
func checkImageURL(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return ""
	}
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got a value without the 'data:' prefix."
	}
	mediaType, data, ok := strings.Cut(rest, ";base64,")
	if !ok || !slices.Contains(imageTypes, mediaType) {
		return fmt.Sprintf("unsupported image type in data URL; use one of %s", strings.Join(imageTypes, ", "))
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil || data == "" {
		return "the data URL's base64 payload does not decode."
	}
	return ""
}

// ImageURLs returns the image_url URLs of the message's content parts.
func (m ChatMessage) ImageURLs() []string {
	var parts []chatPart
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.Type == "image_url" && p.ImageURL != nil {
			out = append(out, p.ImageURL.URL)
		}
	}
	return out
}

// MessagesImageSource is an Anthropic image block's source.
type MessagesImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// checkImageBlock validates block j of message i, an image.
func checkImageBlock(i, j int, b MessagesBlock) *anthropicError {
	at := fmt.Sprintf("messages.%d.content.%d.image.source", i, j)
	s := b.Source
	switch {
	case s == nil:
		return anthropicInvalid("%s: Field required", at)
	case s.Type == "url":
		if !strings.HasPrefix(s.URL, "https://") && !strings.HasPrefix(s.URL, "http://") {
			return anthropicInvalid("%s.url: Input should be a valid URL", at)
		}
	case s.Type == "base64":
		if !slices.Contains(imageTypes, s.MediaType) {
			return anthropicInvalid("%s.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", at)
		}
		if _, err := base64.StdEncoding.DecodeString(s.Data); err != nil || s.Data == "" {
			return anthropicInvalid("%s.base64.data: The image data is not valid base64", at)
		}
	default:
		return anthropicInvalid("%s: Input tag '%s' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'", at, s.Type)
	}
	return nil
}
