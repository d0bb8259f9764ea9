package platform

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// ToolTrial is what trying one HTTP tool of a draft config needs: the
// tenant it runs for, the compiled draft and the tool's spec.
type ToolTrial struct {
	TenantID string
	Bot      *botconfig.Bot
	Spec     botconfig.ToolSpec
}

// PrepareToolTrial lets those who may save versions (editors and up) try
// an HTTP tool of a draft config before saving it, as the preview chat
// lets them try the whole draft: it authorizes p, compiles the config
// (problems point into the config) and finds the tool named tool.
func (s *Service) PrepareToolTrial(ctx context.Context, p *Principal, tenant string, config []byte, tool string) (ToolTrial, error) {
	tenantID, err := s.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjVersions, auth.ActWrite)
	if err != nil {
		return ToolTrial{}, err
	}
	bot, err := s.Configs().compile(ctx, config)
	if err != nil {
		return ToolTrial{}, err
	}
	for _, spec := range bot.Tools {
		if spec.Name != tool {
			continue
		}
		if spec.Endpoint == nil {
			return ToolTrial{}, Invalid(Detail{Pointer: "/tool", Message: fmt.Sprintf("%q is run by the client, not sent over HTTP; only HTTP tools can be tried here", tool)})
		}
		return ToolTrial{TenantID: tenantID, Bot: bot, Spec: spec}, nil
	}
	return ToolTrial{}, Invalid(Detail{Pointer: "/tool", Message: fmt.Sprintf("the config has no tool %q", tool)})
}
