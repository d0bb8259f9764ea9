package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// The MCP face: /v1/tenants/{tenant}/bots/{bot}/mcp serves a published
// bot as an MCP server over streamable HTTP (the official MCP Go SDK).
// It offers one tool, ask, whose calls are the turns of one dialog per MCP
// session, run through Runtime.SendMessage like any message. The bot's
// description is the server's instructions. A tenant's sk_ key with the
// chat scope authenticates every request, and a session stays bound to
// the key and bot that opened it.

// channelMCP is the {{channel}} of dialogs this face starts.
const channelMCP = "mcp"

// mcpSessionIdle closes an MCP session after this long without a
// request; its dialog stays stored.
const mcpSessionIdle = 30 * time.Minute

// mcpAPI serves bots as MCP servers.
type mcpAPI struct {
	*dialogAPI
	handler http.Handler
}

// mcpCaller is the authenticated caller of one MCP request and the bot
// its path names.
type mcpCaller struct {
	p   *platform.Principal
	bot dialog.ChatBot
}

type mcpCallerKey struct{}

func newMCPAPI(d *dialogAPI) *mcpAPI {
	m := &mcpAPI{dialogAPI: d}
	h := mcp.NewStreamableHTTPHandler(m.server, &mcp.StreamableHTTPOptions{SessionTimeout: mcpSessionIdle, Logger: d.log})
	// The SDK binds a session to the TokenInfo's UserID and refuses a
	// request of that session with another: naming key and bot, it keeps
	// a session to the key and the bot that opened it.
	verify := func(_ context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		c, ok := r.Context().Value(mcpCallerKey{}).(*mcpCaller)
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: c.p.KeyID + "/" + c.bot.ID, Extra: map[string]any{"parley.caller": c}}, nil
	}
	m.handler = sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return m
}

// serve: POST and DELETE /v1/tenants/{tenant}/bots/{bot}/mcp. It
// authenticates the key and resolves the bot (another tenant's is 404,
// as everywhere), then hands the request to the SDK's transport.
func (m *mcpAPI) serve(c *gin.Context) {
	p, err := m.serverKey(c)
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="parley"`)
		m.fail(c, err)
		return
	}
	bot, err := m.rt.ChatBot(c.Request.Context(), p, c.Param("tenant"), c.Param("bot"))
	if err != nil {
		m.fail(c, err)
		return
	}
	c.Set(ctxPrincipal, p) // for the request log's tenant_id
	caller := &mcpCaller{p: p.ForBot(bot.ID), bot: bot}
	ctx := context.WithValue(c.Request.Context(), mcpCallerKey{}, caller)
	m.handler.ServeHTTP(c.Writer, c.Request.WithContext(ctx))
}

// server is the MCP server of one session (the SDK asks for one per
// request and keeps the one that opens a session).
func (m *mcpAPI) server(r *http.Request) *mcp.Server {
	c, ok := r.Context().Value(mcpCallerKey{}).(*mcpCaller)
	if !ok {
		return nil
	}
	s := mcp.NewServer(&mcp.Implementation{Name: c.bot.Slug, Title: c.bot.Name, Version: strconv.Itoa(c.bot.Version)},
		&mcp.ServerOptions{Instructions: c.bot.Description})
	sess := &mcpSession{m: m}
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Title: "Ask " + c.bot.Name,
		Description: "Send " + c.bot.Name + " a message and get its reply. Calls in one session continue one conversation."}, sess.ask)
	return s
}

// askInput is the ask tool's arguments.
type askInput struct {
	Message string `json:"message" jsonschema:"what to say to the bot"`
}

// mcpSession is one MCP session's conversation: its dialog, made at the
// first ask.
type mcpSession struct {
	m *mcpAPI

	mu     sync.Mutex // one ask at a time: they are turns of one dialog
	dialog string
}

// ask runs one turn of the session's dialog. Failures are tool errors
// with the API's caller-safe messages (a rate limit, a quota, a model
// that failed), which the calling model reads.
func (s *mcpSession) ask(ctx context.Context, req *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, any, error) {
	c := callerOf(req)
	if c == nil {
		return nil, nil, errors.New("unauthenticated request")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, p := s.m.rt, c.p
	if s.dialog == "" {
		d, err := rt.Dialogs().Create(ctx, p, p.TenantID, c.bot.ID, dialog.CreateDialogInput{Channel: channelMCP})
		if err != nil {
			return s.toolError(err), nil, nil
		}
		s.dialog = d.ID
	}
	var sink agent.Sink
	if token := req.Params.GetProgressToken(); token != nil {
		sink = &progress{ctx: ctx, session: req.Session, token: token}
	}
	turn, err := rt.SendMessage(ctx, p, p.TenantID, s.dialog, dialog.SendInput{Text: in.Message}, sink)
	if err == nil {
		err = turnFailure(turn)
	}
	if err != nil {
		return s.toolError(err), nil, nil
	}
	meta := mcp.Meta{"parley/dialog_id": s.dialog}
	if len(turn.Pending) > 0 {
		return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{
			Text: "the bot paused for a tool call or a confirmation that only Parley's dialog API can answer (dialog " + s.dialog + ")"}}}, nil, nil
	}
	return &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: replyText(turn)}}}, nil, nil
}

// progress tells a client that asked for progress (a progressToken) what
// a running ask does: one notification per model call and per tool call
// of the bot, so a long answer shows its steps and keeps a client that
// resets its timeout on progress waiting.
type progress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	n       float64
}

// Send implements agent.Sink.
func (p *progress) Send(e agent.Event) {
	var msg string
	switch ev := e.(type) {
	case agent.TurnStart:
		msg = "thinking"
	case agent.ToolCall:
		msg = "calling " + ev.Name
	default:
		return
	}
	p.n++
	// A client that went away only misses the note; the answer is stored.
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Message: msg, Progress: p.n})
}

// toolError is err as a tool error the caller may read.
func (s *mcpSession) toolError(err error) *mcp.CallToolResult {
	var msg string
	var f *openaiFailure
	if errors.As(err, &f) {
		msg = f.body.Message
	} else {
		e := s.m.toAPIError(err)
		if e == errInternal {
			s.m.log.Error("mcp ask failed", "dialog", s.dialog, "err", err)
		}
		named := *e // the runtime's /text is the tool's message argument
		named.Details = slices.Clone(e.Details)
		for i := range named.Details {
			if named.Details[i].Pointer == "/text" {
				named.Details[i].Pointer = "/message"
			}
		}
		msg = openaiBody(&named, "").Message // the message with its details
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// callerOf is the caller serve put into the request's token info.
func callerOf(req *mcp.CallToolRequest) *mcpCaller {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil
	}
	c, _ := req.Extra.TokenInfo.Extra["parley.caller"].(*mcpCaller)
	return c
}
