package llm

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Role says who wrote a message.
type Role string

// The roles a provider understands. The system prompt travels in Request.System,
// not as a message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// BlockType names the kind of a content block.
type BlockType string

// Content block kinds.
const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
	// BlockThinking is the model's extended thinking, a provider extra: it
	// is replayed, signature and all, only to the provider kind that made it
	// (Anthropic insists on it within a tool loop); others drop it.
	BlockThinking BlockType = "thinking"
	// BlockImage is an image the user sent; only user messages hold one.
	BlockImage BlockType = "image"
)

// Message is one provider-neutral chat message: a role and its content blocks.
// User messages hold text; assistant messages hold text and tool uses; tool
// messages hold exactly one tool result.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Block is one piece of a message's content; exactly one of its payloads is set,
// the one its Type names.
type Block struct {
	Type       BlockType   `json:"type"`
	Text       string      `json:"text,omitempty"`
	ToolUse    *ToolUse    `json:"tool_use,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	Thinking   *Thinking   `json:"thinking,omitempty"`
	Image      *Image      `json:"image,omitempty"`
}

// Image is a picture in a user message: its bytes (base64 in JSON) and
// their media type, one of ImageTypes.
type Image struct {
	MediaType string `json:"media_type"`
	Data      []byte `json:"data,omitempty"`
	// Size is the byte count of Data, set by views that leave Data out.
	Size int `json:"size,omitempty"`
}

// ImageTypes returns the media types every image-reading provider takes.
func ImageTypes() []string { return []string{"image/png", "image/jpeg", "image/gif", "image/webp"} }

// DataURL is the image as a data: URL, as OpenAI's image_url takes it.
func (i Image) DataURL() string {
	return "data:" + i.MediaType + ";base64," + base64.StdEncoding.EncodeToString(i.Data)
}

// UserMessage returns a user message holding text, then images.
func UserMessage(text string, images ...Image) Message {
	m := UserText(text)
	for _, img := range images {
		m.Content = append(m.Content, Block{Type: BlockImage, Image: &img})
	}
	return m
}

// Images returns the images of m in order.
func (m Message) Images() []Image {
	var out []Image
	for _, c := range m.Content {
		if c.Type == BlockImage && c.Image != nil {
			out = append(out, *c.Image)
		}
	}
	return out
}

// Thinking is a block of the model's extended thinking. Signature proves to
// the provider that the text is the model's own; Redacted holds the
// encrypted form of thinking the provider did not show (Text is then empty).
// Provider names the provider kind whose model wrote it ("anthropic").
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
	Provider  string `json:"provider,omitempty"`
}

// ToolUse is the model's request to call a tool.
type ToolUse struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult answers one ToolUse by its ID.
type ToolResult struct {
	ToolUseID string `json:"tool_use_id"`
	Name      string `json:"name,omitempty"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// UserText returns a user message holding text.
func UserText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: text}}}
}

// AssistantText returns an assistant message holding only text.
func AssistantText(text string) Message {
	return Message{Role: RoleAssistant, Content: []Block{{Type: BlockText, Text: text}}}
}

// ToolResultMessage returns a tool message answering one tool use.
func ToolResultMessage(r ToolResult) Message {
	return Message{Role: RoleTool, Content: []Block{{Type: BlockToolResult, ToolResult: &r}}}
}

// Text returns the concatenated text blocks of m.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolUses returns the tool uses of m in order.
func (m Message) ToolUses() []ToolUse {
	var uses []ToolUse
	for _, c := range m.Content {
		if c.Type == BlockToolUse && c.ToolUse != nil {
			uses = append(uses, *c.ToolUse)
		}
	}
	return uses
}

// ToolResult returns the tool result of a tool message, or nil.
func (m Message) ToolResult() *ToolResult {
	for _, c := range m.Content {
		if c.Type == BlockToolResult {
			return c.ToolResult
		}
	}
	return nil
}
