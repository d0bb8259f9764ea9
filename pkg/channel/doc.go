// Package channel speaks the wire formats of the messaging platforms a
// tenant's bot can be reached through: a generic signed webhook (the
// tenant's own backend, signing the Standard Webhooks way), the Telegram
// Bot API and the Slack Events API. It verifies and parses what a
// platform sends in, and sends replies out through the *http.Client it is
// given (pkg/outbound's, since the API base URLs are configurable). It
// keeps no state and touches no database: pkg/inbound decides what a
// message means for a dialog.
//
//	msg, err := channel.ParseGeneric(body)            // after webhook.Verify
//	tg := channel.Telegram{BaseURL: "https://api.telegram.org", Client: client}
//	err := tg.SendMessage(ctx, token, chatID, reply)  // split at 4096 characters
//	err := channel.VerifySlack(signingSecret, r.Header, body, time.Now())
//	sl := channel.Slack{BaseURL: "https://slack.com/api", Client: client}
//	err := sl.PostMessage(ctx, botToken, channelID, threadTS, reply)
//
// Errors never carry a token: Telegram puts the bot token in the URL's
// path, so a failed call reports the method, not the URL.
package channel
