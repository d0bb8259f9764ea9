package dialog

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/httptool"
)

// ToolTrialInput is one try of an HTTP tool of a draft config: sample
// arguments from the author and the context a dialog would carry.
type ToolTrialInput struct {
	Config    []byte
	Tool      string
	Arguments json.RawMessage
	Context   map[string]string
}

// trialDialogID fills {{dialog_id}} in a trial, which belongs to no dialog.
const trialDialogID = "dlg_tool_trial"

// TryHTTPTool sends one call of a draft's HTTP tool through the outbound
// client, as a dialog would (same variables, secrets, policy and limits),
// and returns the exchange with secrets scrubbed. Arguments that do not
// match the tool's schema are refused before anything is sent, as the
// agent loop refuses them.
func (r *Runtime) TryHTTPTool(ctx context.Context, p *platform.Principal, tenant string, in ToolTrialInput) (httptool.Trial, error) {
	prep, err := r.svc.PrepareToolTrial(ctx, p, tenant, in.Config, in.Tool)
	if err != nil {
		return httptool.Trial{}, err
	}
	for k := range in.Context {
		if strings.HasPrefix(k, botconfig.SecretPrefix) {
			// Secrets come from the tenant's store only, as in a dialog.
			return httptool.Trial{}, platform.Invalid(platform.Detail{Pointer: "/context/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k), Message: "secrets cannot be given as context; store them as tenant secrets"})
		}
	}
	args := in.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	userID := in.Context["user_id"]
	vars, err := r.varsFor(ctx, prep.TenantID, prep.Bot, botconfig.Vars{
		"dialog_id": trialDialogID, "tenant_id": prep.TenantID, "bot_id": "", "chatbot_id": prep.Bot.ChatbotID,
		"user_id": userID, "channel": "test", "locale": "en", "now": r.now().Format(time.RFC3339),
	}, in.Context)
	if err != nil {
		return httptool.Trial{}, err
	}
	t, err := httptool.New(prep.Spec, r.opts.HTTPClient, vars, r.opts.HTTP)
	if err != nil {
		return httptool.Trial{}, r.internal(ctx, "tool trial: build", err)
	}
	set, err := tool.NewSet(r.schemas, t)
	if err != nil {
		return httptool.Trial{}, r.internal(ctx, "tool trial: schema", err)
	}
	if err := set.Validate(in.Tool, args); err != nil {
		return httptool.Trial{}, platform.Invalid(platform.Detail{Pointer: "/arguments", Message: strings.TrimPrefix(err.Error(), "invalid arguments: ")})
	}
	trial, _, err := httptool.Try(ctx, t, args)
	if err == nil {
		outcome := "ok"
		if trial.Result.IsError {
			outcome = "error"
		}
		r.metrics.trials.WithLabelValues(outcome).Inc()
	}
	return trial, err
}
