package dialog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool"
)

// SendInput is one user message.
type SendInput struct {
	Text string
	// Origin is the browser origin of the request, "" server to server.
	Origin string
	// MessageID, when set, is the id the text is stored under: the one an
	// Idempotency-Key's claim names. When a message of that id is stored
	// already, the request that claimed it died after storing it; the
	// turn then answers that message, and the text is not stored again.
	MessageID string
	// ClientTools are tools the caller declares for this request and runs
	// itself (the OpenAI face's request tools): the dialog pauses on their
	// calls as on a config's client tools. A name the bot's own tools
	// already have is left out.
	ClientTools []tool.Definition
	// Images are pictures the user sends with the text (at most
	// MaxImages), for bots whose model reads images.
	Images []ImageInput
	// images are Images resolved: fetched and checked.
	images []llm.Image
}

// ToolResultsInput is the caller's results of the client calls a paused
// dialog waits for.
type ToolResultsInput struct {
	Results []agent.ClientResult
	// Origin is the browser origin of the request, "" server to server.
	Origin string
	// ClientTools are the caller's tools for the rest of this request's
	// run, as in SendInput.
	ClientTools []tool.Definition
}

// Turn is what one request to a dialog produced.
type Turn struct {
	DialogID string
	// Messages are the messages stored by this request, in order.
	Messages []Message
	// Done ends every answered request; nil when the text was queued.
	Done *agent.Done
	// Error says why the run stopped with stop reason "error".
	Error *agent.Error
	// Pending are the calls the dialog now waits for.
	Pending []PendingCall
	// Queued says the text joined a reply already being generated in this
	// dialog; that reply's stream carries the answer.
	Queued bool
}

// SendMessage stores the user's text, then answers it with the loop,
// sending events to sink as they happen (sink may be nil). The text is
// stored before any model call, so a failing model never loses it. While
// another request of this process is answering the dialog, the text joins
// that run (steering); while another process is, it is a conflict.
//
// The dialog is not read first: taking its lease (or joining this
// process's run of it) is also what checks that the caller may chat with
// it, so a warm turn's first statement already stores the text.
func (r *Runtime) SendMessage(ctx context.Context, p *platform.Principal, tenant, dialog string, in SendInput, sink agent.Sink) (Turn, error) {
	tenantID, err := r.turnTenant(ctx, p, tenant, in.Origin)
	if err != nil {
		return Turn{}, err
	}
	if err := checkText(in.Text); err != nil {
		return Turn{}, err
	}
	if p.KeyKind == auth.KindPublishable {
		// A widget's dialog answers only its end user (sameEndUser), which
		// takes reading the dialog; server-side turns skip the read.
		if _, err := r.turnDialog(ctx, p, tenant, dialog, in.Origin); err != nil {
			return Turn{}, err
		}
	}
	release, err := r.Quotas().admit(ctx, p, tenantID)
	if err != nil {
		return Turn{}, err
	}
	defer release()
	// The text is masked before it is stored or joins a run, so its
	// personal data is nowhere but the dialog's vault.
	g, err := r.inputGuard(ctx, p, tenantID, dialog)
	if err != nil {
		return Turn{}, err
	}
	if in.Text, err = g.maskInput(ctx, in.Text); err != nil {
		return Turn{}, err
	}
	ctx = withGuard(ctx, g)
	if in.images, err = r.Images().images(ctx, in.Images); err != nil {
		return Turn{}, err
	}
	joining := in.Text
	if len(in.images) > 0 {
		if err := r.Images().checkReadsImages(ctx, p, tenantID, dialog); err != nil {
			return Turn{}, err
		}
		joining = "" // steering carries text only: images wait for the reply to end (busy)
	}
	lr, queued, err := r.join(ctx, p, tenantID, dialog, joining)
	if err != nil || queued != nil {
		return Turn{DialogID: dialog, Messages: msgList(queued), Queued: queued != nil}, err
	}
	run, err := r.start(ctx, p, &store.Dialog{TenantID: tenantID, ID: dialog}, lr, sink, in)
	if inactive := (*inactiveDialog)(nil); errors.As(err, &inactive) {
		return r.answerInactive(ctx, inactive.dialog, in.Text, in.images, sink)
	}
	if err != nil {
		return Turn{}, err
	}
	defer run.end()
	if run.first == nil {
		// The text is in the conversation already, stored by this
		// request's first try, which died before answering it.
		r.open(lr)
		return run.exec(false, func(a *agent.Agent) (agent.Outcome, error) { return a.Continue(run.ctx, &run.st) })
	}
	run.place(in.Text)
	r.open(lr)
	return run.exec(true, func(a *agent.Agent) (agent.Outcome, error) { return a.Send(run.ctx, &run.st, in.Text, in.images...) })
}

func msgList(m *store.Message) []Message {
	if m == nil {
		return []Message{}
	}
	return []Message{messageView(m)}
}

// checkText refuses an empty or blank message (the model's API refuses
// content-less messages too) and one over MaxMessageChars.
func checkText(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return platform.Invalid(platform.Detail{Pointer: "/text", Message: "is required"})
	case utf8.RuneCountInString(text) > MaxMessageChars:
		return platform.Invalid(platform.Detail{Pointer: "/text", Message: fmt.Sprintf("must have at most %d characters", MaxMessageChars)})
	}
	return nil
}

// inactiveDialog is the lease's refusal of a dialog no run answers.
type inactiveDialog struct{ dialog *store.Dialog }

func (e *inactiveDialog) Error() string { return "dialog " + e.dialog.ID + " is " + e.dialog.Status }

// Unwrap is the conflict a caller reports that does not answer the dialog
// itself (answerInactive does): a resume that finds it handed off meanwhile.
func (e *inactiveDialog) Unwrap() error {
	if e.dialog.Status == DialogClosed {
		return errDialogClosed()
	}
	return platform.Errorf(platform.CodeConflict, "this dialog is %s; no reply is generated for it", e.dialog.Status)
}

// answerInactive answers a text for a dialog that is closed, or handed
// off to a human, who reads it from the dialog.
func (r *Runtime) answerInactive(ctx context.Context, d *store.Dialog, text string, images []llm.Image, sink agent.Sink) (Turn, error) {
	if d.Status == DialogHandoff {
		return r.storeForHuman(ctx, d, text, images, sink)
	}
	return Turn{}, errDialogClosed()
}

// storeForHuman keeps a message of a handed-off dialog without answering:
// a human agent reads it from the dialog.
func (r *Runtime) storeForHuman(ctx context.Context, d *store.Dialog, text string, images []llm.Image, sink agent.Sink) (Turn, error) {
	m, err := r.storeUserText(ctx, d, text, store.MessageComplete, images...)
	if err != nil {
		return Turn{}, err
	}
	r.signal(ctx, d.TenantID, d.ID, signalChanged) // the operator's inbox shows it
	done := &agent.Done{StopReason: agent.StopHandoff}
	if sink != nil {
		sink.Send(DialogEvent{DialogID: d.ID})
		sink.Send(MessageEvent{Message: messageView(m)})
		sink.Send(*done)
	}
	return Turn{DialogID: d.ID, Messages: []Message{messageView(m)}, Done: done}, nil
}

// SubmitToolResults resumes a dialog paused on client tools with their
// results.
func (r *Runtime) SubmitToolResults(ctx context.Context, p *platform.Principal, tenant, dialog string, in ToolResultsInput, sink agent.Sink) (Turn, error) {
	results := in.Results
	var ps problems
	if len(results) == 0 {
		ps.add("/results", "give at least one result")
	}
	for i, res := range results {
		if len(res.Content) > MaxMessageChars*4 {
			ps.add(fmt.Sprintf("/results/%d/content", i), "must be at most %d bytes", MaxMessageChars*4)
		}
	}
	if err := ps.err(); err != nil {
		return Turn{}, err
	}
	return r.resume(ctx, p, tenant, dialog, in.Origin, in.ClientTools, sink, func(st *agent.State) error {
		var ps problems
		for i, res := range results {
			if !isPending(st, res.ID, agent.PendingClient) {
				ps.add(fmt.Sprintf("/results/%d/id", i), "is not a client tool call this dialog waits for")
			}
		}
		return ps.err()
	}, func(run *dialogRun, a *agent.Agent) (agent.Outcome, error) {
		// A client's results are outputs like any tool's: masked before
		// they are stored or the model reads them.
		for i := range results {
			masked, err := run.guard.mask(run.ctx, results[i].Content)
			if err != nil {
				masked = "the tool's output could not be screened"
			}
			results[i].Content = masked
		}
		return a.SubmitToolResults(run.ctx, &run.st, results)
	})
}

// Confirm resumes a dialog paused on a confirmation: an approved call runs,
// a declined one tells the model no.
func (r *Runtime) Confirm(ctx context.Context, p *platform.Principal, tenant, dialog, origin, id string, approved bool, sink agent.Sink) (Turn, error) {
	return r.resume(ctx, p, tenant, dialog, origin, nil, sink, func(st *agent.State) error {
		if !isPending(st, id, agent.PendingConfirmation) {
			return platform.Invalid(platform.Detail{Pointer: "/id", Message: "is not a call this dialog waits to have confirmed"})
		}
		return nil
	}, func(run *dialogRun, a *agent.Agent) (agent.Outcome, error) {
		return a.Confirm(run.ctx, &run.st, id, approved)
	})
}

func isPending(st *agent.State, id, kind string) bool {
	for _, pc := range st.Pending {
		if pc.ID == id && pc.Kind == kind {
			return true
		}
	}
	return false
}

// resume runs act on a paused dialog after check accepts its state.
func (r *Runtime) resume(ctx context.Context, p *platform.Principal, tenant, dialog, origin string, clientTools []tool.Definition, sink agent.Sink,
	check func(*agent.State) error, act func(*dialogRun, *agent.Agent) (agent.Outcome, error)) (Turn, error) {
	d, err := r.turnDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return Turn{}, err
	}
	if d.Status == DialogClosed {
		return Turn{}, errDialogClosed()
	}
	if d.Status != DialogPaused {
		return Turn{}, platform.Errorf(platform.CodeConflict, "this dialog is not waiting for tool results or a confirmation")
	}
	st, err := loadState(d)
	if err != nil {
		return Turn{}, r.internal(ctx, "resume: state", err)
	}
	if err := check(&st.State); err != nil {
		return Turn{}, err
	}
	release, err := r.Quotas().admit(ctx, p, d.TenantID)
	if err != nil {
		return Turn{}, err
	}
	defer release()
	lr, queued, err := r.join(ctx, p, d.TenantID, d.ID, "")
	if err != nil || queued != nil {
		return Turn{}, err
	}
	run, err := r.start(ctx, p, d, lr, sink, SendInput{ClientTools: clientTools})
	if err != nil {
		return Turn{}, err
	}
	defer run.end()
	if run.dialog.Status != DialogPaused {
		return Turn{}, platform.Errorf(platform.CodeConflict, "this dialog is no longer waiting; another request answered it")
	}
	if err := check(&run.st); err != nil {
		return Turn{}, err
	}
	r.open(lr)
	return run.exec(false, func(a *agent.Agent) (agent.Outcome, error) { return act(run, a) })
}

// place registers the request's own text, stored with the lease (start)
// before the loop runs so a failing model never loses it, as the loop's
// next user message. In an active dialog it was stored complete: nothing
// precedes it in the loop, so the row is already where the loop puts it
// and needs no second write (one that must move, because the loop first
// answered calls a dead run left open, is moved by DequeueMessage). A
// paused dialog waits for tool results no user text may precede, so there
// it was stored queued and is completed only when the loop takes it.
func (run *dialogRun) place(text string) {
	m := run.first
	run.rec.saw(m)
	q := queuedText{text: text, id: m.ID}
	if m.Status == store.MessageComplete {
		q.row = m
	}
	run.r.mu.Lock()
	run.lr.queue = append(run.lr.queue, q)
	run.r.mu.Unlock()
}

// turnDialog resolves a dialog for a caller who chats in it, at one
// statement: the tenant comes from chatTenant's cache, and the bot is not
// read, because the dialog names it and bots are never deleted. What
// AuthorizeChat checks of the caller is checked here alike, from the
// principal, on every request: a widget key only chats with its own bot's
// dialogs (another's is not_found, so ids cannot be probed) and only from
// its allowed origins.
func (r *Runtime) turnDialog(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) (*store.Dialog, error) {
	tenantID, err := r.turnTenant(ctx, p, tenant, origin)
	if err != nil {
		return nil, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return nil, r.storeErr(ctx, "get dialog", "dialog", err)
	}
	if !mayChat(p, d) {
		return nil, platform.NotFound("dialog")
	}
	if err := r.sameEndUser(ctx, p, d); err != nil {
		return nil, err
	}
	return d, nil
}

// turnTenant is the id of the tenant p chats in, from a publishable key
// only at one of its origins.
func (r *Runtime) turnTenant(ctx context.Context, p *platform.Principal, tenant, origin string) (string, error) {
	tenantID, err := r.chatTenant(ctx, p, tenant)
	if err != nil {
		return "", err
	}
	if p.KeyKind == auth.KindPublishable && !p.AllowsOrigin(origin) {
		return "", platform.Errorf(platform.CodeForbidden, "this key may not be used from this origin")
	}
	return tenantID, nil
}

// leaseBot is the only bot whose dialogs p may chat with: a publishable
// key's, or a principal's narrowed with ForBot; "" for any of its
// tenant's.
func leaseBot(p *platform.Principal) string {
	return p.BotID
}

// mayChat says whether p may chat with d of its tenant (leaseBot).
func mayChat(p *platform.Principal, d *store.Dialog) bool {
	return mayChatWith(p, d.BotID)
}
