package apply

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// BotFile is an agent config file checked as apply and parley validate
// check it: Bot is nil when Errors has any.
type BotFile struct {
	Bot      *botconfig.Bot
	Errors   botconfig.Problems
	Warnings botconfig.Problems
}

// CheckBotFile loads and compiles one file. A file that cannot be read is
// reported like a config problem at the document root. Models are checked
// against the lists of serverModels (the server's own providers; nil:
// none) and of the providers.json beside the file's bots/ directory, whose
// providers take the place of the server's of the same name.
func CheckBotFile(file string, opts botconfig.Options, serverModels map[string][]string) BotFile {
	cfg, err := opts.LoadFile(file)
	var bot *botconfig.Bot
	if err == nil {
		bot, err = opts.Compile(cfg)
	}
	var problems botconfig.Problems
	switch {
	case errors.As(err, &problems):
		return BotFile{Errors: problems}
	case err != nil:
		return BotFile{Errors: botconfig.Problems{{Pointer: "", Message: strings.TrimPrefix(err.Error(), "botconfig: ")}}}
	}
	models := maps.Clone(serverModels)
	if models == nil {
		models = map[string][]string{}
	}
	maps.Copy(models, providerModels(filepath.Join(filepath.Dir(filepath.Dir(file)), providersFileName)))
	return BotFile{Bot: bot, Warnings: bot.UnknownModels(models)}
}

// providerModels reads the model list of each provider in a tenant
// directory's providers.json (which CheckBotFile finds beside the bots/
// directory of the file it checks); nil when there is no such file or it
// does not parse, which apply reports on its own.
func providerModels(path string) map[string][]string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var file map[string]struct {
		Models []string `json:"models"`
	}
	if json.Unmarshal(raw, &file) != nil {
		return nil
	}
	out := map[string][]string{}
	for name, p := range file {
		out[name] = p.Models
	}
	return out
}
