package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/parleyhq/parley/pkg/tool"
)

type currentTimeArgs struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA time zone such as Europe/Berlin; the dialog's default when omitted"`
}

func currentTime() Native {
	return define("current_time",
		"Get the current date, time and weekday. Use it before answering anything that depends on today's date or the time.",
		func(ctx context.Context, env Env, args currentTimeArgs) (tool.Result, error) {
			loc := env.Location
			if loc == nil {
				loc = time.UTC
			}
			if args.Timezone != "" {
				l, err := time.LoadLocation(args.Timezone)
				if err != nil {
					return tool.Errorf(fmt.Sprintf("unknown time zone %q; use an IANA name such as America/New_York", args.Timezone)), nil
				}
				loc = l
			}
			now := env.now().In(loc)
			out, err := json.Marshal(map[string]string{
				"datetime": now.Format(time.RFC3339),
				"date":     now.Format("2006-01-02"),
				"time":     now.Format("15:04"),
				"weekday":  now.Weekday().String(),
				"timezone": loc.String(),
			})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Content: string(out)}, nil
		})
}
