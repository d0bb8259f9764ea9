// Package botrun maps a compiled bot (pkg/botconfig) onto the agent loop's
// settings (pkg/agent): its prompt with a dialog's facts, model options,
// limits and skills. Dialogs (pkg/dialog), `parley chat` and the bots'
// conversation tests (pkg/bottest) all build their loop with Config, so a
// bot runs the same everywhere.
package botrun
