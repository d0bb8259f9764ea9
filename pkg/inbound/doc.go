// Package inbound answers the messages that arrive through a tenant's
// channels (POST /v1/channels/{channel}/inbound): it verifies each
// request the way its channel's platform signs it (pkg/channel), records
// the platform's delivery id so a retry never answers twice, maps the
// platform's conversation to a dialog (created on the first message), and
// answers with the dialog runtime as the channel's own chat-scoped
// principal.
//
// A webhook channel answers in the response, or with "async": true at
// once (202), the reply then leaving as the outbound webhook
// message.created with the conversation's external ids. Telegram and
// Slack are acknowledged at once (Slack wants an answer within 3 s) and
// answered with sendMessage and chat.postMessage through the outbound
// client. Whatever is answered after the acknowledgement (those, async
// webhook messages, an operator's messages in a Telegram or Slack
// dialog) is a durable job (store.ChannelJob) queued before it, which Run
// works on every server until it is done (jobs.go). Shutdown waits for
// the jobs in flight.
//
//	in, err := inbound.New(inbound.Options{Platform: svc, Runtime: rt, Store: st, Client: client, ...})
//	go in.Run(ctx)
//	resp, err := in.Receive(ctx, channelID, r.Header, body)
package inbound
