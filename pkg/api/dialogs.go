package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/prometheus/client_golang/prometheus"
)

// The wire types of the dialog routes. They belong with the others in
// apiclient/types.go; they live here until the client learns dialogs.

// CreateDialogRequest is the body of POST .../bots/{bot}/dialogs.
type CreateDialogRequest struct {
	UserID  string            `json:"user_id,omitempty"`
	Context map[string]string `json:"context,omitempty"`
	// Version previews a version other than the published one (editors).
	Version int `json:"version,omitempty"`
}

// DialogList is one page of dialogs.
type DialogList struct {
	Dialogs    []platform.Dialog `json:"dialogs"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// dialogAPI serves dialogs, their messages and the tenant's usage over the
// platform's dialog runtime.
type dialogAPI struct {
	*server
	rt *platform.Runtime
	// ping is how often an idle event stream gets a comment, so proxies and
	// browsers do not close it while a tool runs.
	ping time.Duration
	// maxMessageBody caps the body of the routes that run a turn.
	maxMessageBody int64
	// streams counts open event streams.
	streams prometheus.Gauge
}

// defaultPing is the SSE keep-alive interval of DESIGN.md section 6.
const defaultPing = 15 * time.Second

// defaultMaxMessageBody leaves room for platform.MaxMessageChars runes of
// four bytes each, escaped, in a JSON envelope.
const defaultMaxMessageBody = 512 << 10

func newDialogAPI(s *server) *dialogAPI {
	rt := s.runtime
	if rt == nil && s.platform != nil {
		// NewRuntime fails only without a service.
		rt, _ = platform.NewRuntime(s.platform, platform.RuntimeOptions{})
	}
	streams := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "parley_active_streams", Help: "Event streams (SSE) open right now."})
	if err := s.registry.Register(streams); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			streams = are.ExistingCollector.(prometheus.Gauge) // a second handler on one registry
		}
	}
	return &dialogAPI{server: s, rt: rt, ping: defaultPing, maxMessageBody: defaultMaxMessageBody, streams: streams}
}

// fail writes err like server.fail, adding Retry-After to rate limits.
func (d *dialogAPI) fail(c *gin.Context, err error) {
	if wait := platform.RetryAfter(err); wait > 0 {
		c.Header("Retry-After", strconv.Itoa(int(wait/time.Second)))
	}
	d.server.fail(c, err)
}

// createDialog: POST /v1/tenants/{tenant}/bots/{bot}/dialogs -> the dialog.
func (d *dialogAPI) createDialog(c *gin.Context) {
	var req CreateDialogRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	dlg, err := d.rt.CreateDialog(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"),
		platform.CreateDialogInput{UserID: req.UserID, Context: req.Context, Version: req.Version, Origin: c.GetHeader("Origin")})
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, dlg)
}

// listDialogs: GET /v1/tenants/{tenant}/dialogs?bot=&status=&cursor=.
func (d *dialogAPI) listDialogs(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	f := platform.DialogFilter{Bot: c.Query("bot"), Status: c.Query("status")}
	ds, next, err := d.rt.ListDialogs(c.Request.Context(), principal(c), c.Param("tenant"), f, opts)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, DialogList{Dialogs: ds, NextCursor: next})
}

// getDialog: GET /v1/tenants/{tenant}/dialogs/{dialog} -> the dialog with
// its messages and tool calls.
func (d *dialogAPI) getDialog(c *gin.Context) {
	dd, err := d.rt.GetDialog(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), c.GetHeader("Origin"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, dd)
}
