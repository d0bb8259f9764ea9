package mcptool

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalog is what a server offers besides tools, as listed on one session:
// its resources and resource templates, and its prompts. A kind the server
// does not advertise stays nil. Every config of the server shares the
// listing, whichever kinds it exposes.
type catalog struct {
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	prompts   []*mcp.Prompt
	// offersResources and offersPrompts say the server advertises the
	// capability, so a read or a get may be tried.
	offersResources, offersPrompts bool
}

// listCatalog returns the server's resources and prompts, from the cache
// while the session that listed them is open and the server has announced
// no change.
func (c *conn) listCatalog(ctx context.Context) (*catalog, error) {
	cat, err := listCached(ctx, c, "list resources and prompts", &c.catalog, func(s *mcp.ClientSession) ([]catalog, error) {
		cat, err := listCatalog(ctx, s)
		if err != nil {
			return nil, err
		}
		return []catalog{*cat}, nil
	})
	if err != nil {
		return nil, err
	}
	return &cat[0], nil
}

func listCatalog(ctx context.Context, s *mcp.ClientSession) (*catalog, error) {
	cat := &catalog{}
	caps := &mcp.ServerCapabilities{}
	if init := s.InitializeResult(); init != nil && init.Capabilities != nil {
		caps = init.Capabilities
	}
	var err error
	if caps.Resources != nil {
		cat.offersResources = true
		if cat.resources, err = collect(s.Resources(ctx, nil)); err != nil {
			return nil, err
		}
		// Templates are optional in the protocol: a server that has
		// resources but no templates may not answer their list.
		cat.templates, _ = collect(s.ResourceTemplates(ctx, nil))
	}
	if caps.Prompts != nil {
		cat.offersPrompts = true
		if cat.prompts, err = collect(s.Prompts(ctx, nil)); err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// collect reads a listing up to maxListedTools entries: a server that pages
// forever must not hold a dialog's start hostage.
func collect[T any](seq func(yield func(*T, error) bool)) ([]*T, error) {
	out := []*T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if len(out) == maxListedTools {
			break
		}
	}
	return out, nil
}
