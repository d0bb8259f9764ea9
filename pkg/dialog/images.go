package dialog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/platform"
)

// Images is the images user messages carry: reach it with Runtime.Images().
type Images struct{ rt *Runtime }

// Images returns the images user messages carry.
func (r *Runtime) Images() Images { return Images{r} }

// Images users send with a message. An image is stored in the user's
// message row (its content blocks, in the tenant's database), so deleting
// the dialog, erasing the user or retention deletes it with the message;
// no other copy is kept.

// MaxImages is how many images one message may carry.
const MaxImages = 4

// DefaultMaxImageBytes is the largest image file accepted when
// Options.MaxImageBytes is 0: Anthropic's limit, below OpenAI's.
const DefaultMaxImageBytes = 5 << 20

// ImageInput is one image of a user message: its bytes (base64 in the API),
// or an http(s) URL the server fetches through the outbound policy.
type ImageInput struct {
	Data []byte
	URL  string
}

// maxImageBytes is the configured limit of one image.
func (i Images) maxImageBytes() int64 {
	r := i.rt
	if r.opts.MaxImageBytes > 0 {
		return r.opts.MaxImageBytes
	}
	return DefaultMaxImageBytes
}

// MaxBytes is the largest image file a message may carry, for the API
// to size its body limit.
func (i Images) MaxBytes() int64 {
	r := i.rt
	return r.Images().maxImageBytes()
}

// images resolves a message's images: fetches URLs, and checks each by its
// content (not its name or claimed type) to be a PNG, JPEG, GIF or WebP
// within the size limit. Problems point at /images/N.
func (im Images) images(ctx context.Context, in []ImageInput) ([]llm.Image, error) {
	r := im.rt
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxImages {
		return nil, platform.Invalid(platform.Detail{Pointer: "/images", Message: fmt.Sprintf("at most %d images per message", MaxImages)})
	}
	var ps problems
	out := make([]llm.Image, 0, len(in))
	for i, img := range in {
		at := fmt.Sprintf("/images/%d", i)
		data := img.Data
		switch {
		case (len(img.Data) > 0) == (img.URL != ""):
			ps.add(at, "give the image's data (base64) or its url, one of the two")
			continue
		case img.URL != "":
			var err error
			if data, err = r.Images().fetchImage(ctx, img.URL); err != nil {
				ps.add(at+"/url", "%s", err.Error())
				continue
			}
		}
		if int64(len(data)) > r.Images().maxImageBytes() {
			ps.add(at, "the image has %d bytes; at most %d are accepted", len(data), r.Images().maxImageBytes())
			continue
		}
		mediaType, ok := sniffImage(data)
		if !ok {
			ps.add(at, "is not a PNG, JPEG, GIF or WebP image (judged by its content, %s)", mediaType)
			continue
		}
		cfg, err := imageHeader(mediaType, data)
		switch {
		case err != nil:
			ps.add(at, "starts like %s but its header does not decode: the file is broken or not an image", mediaType)
			continue
		case cfg.Width < 1 || cfg.Height < 1:
			ps.add(at, "is a %dx%d image: it has no pixels", cfg.Width, cfg.Height)
			continue
		}
		out = append(out, llm.Image{MediaType: mediaType, Data: data})
	}
	if len(ps) > 0 {
		return nil, &platform.Error{Code: platform.CodeInvalid, Message: ps[0].Message, Details: ps}
	}
	return out, nil
}

// sniffImage names the image type of data from its first bytes, as
// browsers do, and says whether the model APIs take it.
func sniffImage(data []byte) (string, bool) {
	t := http.DetectContentType(data)
	return t, slices.Contains(llm.ImageTypes(), t)
}

// fetchImage downloads an image through the SSRF-safe client, at most one
// byte over the limit. Its errors are worded for the caller: they never
// say more of the network than the status the server answered.
func (i Images) fetchImage(ctx context.Context, raw string) ([]byte, error) {
	r := i.rt
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("must be an http or https URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("must be an http or https URL")
	}
	req.Header.Set("Accept", strings.Join(llm.ImageTypes(), ", "))
	resp, err := r.opts.HTTPClient.Do(req)
	if err != nil {
		r.log.InfoContext(ctx, "dialog: image url not fetched", "err", err)
		return nil, fmt.Errorf("could not be fetched: the address is not allowed or did not answer")
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("could not be fetched: the server answered %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.Images().maxImageBytes()+1))
	if err != nil {
		return nil, fmt.Errorf("could not be fetched: the download broke off")
	}
	return data, nil
}

// checkReadsImages refuses images for a dialog whose bot's main model does
// not read them, before anything is stored.
func (i Images) checkReadsImages(ctx context.Context, p *platform.Principal, tenantID, dialogID string) error {
	r := i.rt
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialogID)
	if err != nil {
		return r.storeErr(ctx, "images: dialog", "dialog", err)
	}
	if !mayChat(p, d) {
		return platform.NotFound("dialog")
	}
	bot, err := r.botFor(ctx, d)
	if err != nil {
		return err
	}
	if model := r.Images().modelOf(bot); !r.Images().readsImages(bot, model) {
		return platform.Invalid(platform.Detail{Pointer: "/images",
			Message: fmt.Sprintf("this bot's model %s does not read images; send text, or set llm.images in its config if the model does", model)})
	}
	return nil
}

func (i Images) modelOf(bot *botconfig.Bot) string {
	r := i.rt
	if bot.LLM.Model != "" {
		return bot.LLM.Model
	}
	return r.opts.DefaultModel
}

// readsImages says whether model, one of bot's, reads images: the config's
// llm.images when set, else the catalog's answer.
func (i Images) readsImages(bot *botconfig.Bot, model string) bool {
	r := i.rt
	if bot.LLM.Images != nil {
		return *bot.LLM.Images
	}
	return r.opts.Catalog.Info(model).Images
}

// textOnly is a provider for a model that does not read images: each image
// of the conversation becomes a line of text saying one was sent, so the
// model can tell the user rather than fail the call.
type textOnly struct{ llm.Provider }

func (p textOnly) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return p.Provider.Complete(ctx, withoutImages(req))
}

func (p textOnly) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	return p.Provider.Stream(ctx, withoutImages(req), onDelta)
}

// withoutImages is req with every image block replaced by a placeholder.
func withoutImages(req *llm.Request) *llm.Request {
	out := *req
	out.Messages = make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		out.Messages[i] = m
		if len(m.Images()) == 0 {
			continue
		}
		blocks := make([]llm.Block, len(m.Content))
		for j, b := range m.Content {
			blocks[j] = b
			if b.Type == llm.BlockImage && b.Image != nil {
				blocks[j] = llm.Block{Type: llm.BlockText, Text: fmt.Sprintf("\n[The user sent an image (%s, %d KB); this model cannot see images. Tell the user so if it matters.]", b.Image.MediaType, (len(b.Image.Data)+1023)/1024)}
			}
		}
		out.Messages[i].Content = blocks
	}
	return &out
}

// imageAware gives each model res chooses for bot that does not read
// images the textOnly provider: fallbacks and downgrades included.
func (i Images) imageAware(bot *botconfig.Bot, res agent.ProviderResolver) agent.ProviderResolver {
	r := i.rt
	return agent.ResolverFunc(func(ctx context.Context, info agent.ResolveInfo) (agent.Choice, error) {
		c, err := res.Resolve(ctx, info)
		if err == nil && c.Provider != nil && !r.Images().readsImages(bot, c.Model) {
			c.Provider = textOnly{c.Provider}
		}
		return c, err
	})
}

// withoutImageData is a message's content with each image's bytes left out
// (its type and size kept): callers get the picture they sent once, not
// back in every event, page and export.
func withoutImageData(content json.RawMessage) json.RawMessage {
	if !bytes.Contains(content, []byte(`"image"`)) {
		return content
	}
	var blocks []llm.Block
	if json.Unmarshal(content, &blocks) != nil {
		return content
	}
	for i, b := range blocks {
		if b.Image != nil {
			img := *b.Image
			img.Size, img.Data = len(img.Data), nil
			blocks[i].Image = &img
		}
	}
	out, err := json.Marshal(blocks)
	if err != nil {
		return content
	}
	return out
}
