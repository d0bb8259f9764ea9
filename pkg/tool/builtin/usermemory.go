package builtin

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// UserMemory is what a bot keeps about the dialog's end user across
// dialogs (the config's memory section). The platform stores it per
// tenant, bot and user.
type UserMemory interface {
	// Remember stores value under key, replacing an older value; a new
	// key when the memory is full is ErrUserMemoryFull.
	Remember(ctx context.Context, key, value string) error
	// Forget deletes the note under key and reports whether there was one.
	Forget(ctx context.Context, key string) (bool, error)
}

// ErrUserMemoryFull is returned by UserMemory.Remember when the user's
// notes are at the bot's memory.max_notes and the key is new.
var ErrUserMemoryFull = errors.New("memory is full")

// UserMemoryTools are remember_about_user and forget_about_user bound to
// mem, the tools a bot with memory enabled offers when the dialog's user
// is known.
func UserMemoryTools(mem UserMemory) []tool.Tool {
	env := Env{UserMemory: mem}
	return []tool.Tool{rememberAboutUser.Bind(env), forgetAboutUser.Bind(env)}
}

type rememberAboutUserArgs struct {
	Key   string `json:"key" jsonschema:"short name for the note, such as name, preferred_language or open_ticket"`
	Value string `json:"value" jsonschema:"what to remember, in one or two sentences"`
}

var rememberAboutUser = define(botconfig.MemoryRememberTool,
	"Save a note about this user that you will see again in their later conversations, such as their name, a preference or an open matter. Saving the same key again replaces the note. Never save passwords, payment details or other secrets.",
	func(ctx context.Context, env Env, args rememberAboutUserArgs) (tool.Result, error) {
		switch {
		case args.Key == "" || len(args.Key) > botconfig.MaxMemoryKeyBytes:
			return tool.Errorf(fmt.Sprintf("key must be 1 to %d bytes", botconfig.MaxMemoryKeyBytes)), nil
		case args.Value == "":
			return tool.Errorf("value is empty; to remove a note use " + botconfig.MemoryForgetTool), nil
		case len(args.Value) > botconfig.MaxMemoryValueBytes:
			return tool.Errorf(fmt.Sprintf("value is %d bytes; keep notes under %d bytes", len(args.Value), botconfig.MaxMemoryValueBytes)), nil
		case !utf8.ValidString(args.Key) || !utf8.ValidString(args.Value):
			return tool.Errorf("key and value must be valid UTF-8 text"), nil
		}
		err := env.UserMemory.Remember(ctx, args.Key, args.Value)
		if errors.Is(err, ErrUserMemoryFull) {
			return tool.Errorf("memory is full: replace an existing note (same key) or remove one with " + botconfig.MemoryForgetTool), nil
		}
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{Content: fmt.Sprintf("Saved note %q about this user.", args.Key)}, nil
	})

type forgetAboutUserArgs struct {
	Key string `json:"key" jsonschema:"the key of the note to remove"`
}

var forgetAboutUser = define(botconfig.MemoryForgetTool,
	"Remove a note about this user: one that is wrong or outdated, or that the user asks you to forget.",
	func(ctx context.Context, env Env, args forgetAboutUserArgs) (tool.Result, error) {
		found, err := env.UserMemory.Forget(ctx, args.Key)
		if err != nil {
			return tool.Result{}, err
		}
		if !found {
			return tool.Result{Content: fmt.Sprintf("There was no note %q.", args.Key)}, nil
		}
		return tool.Result{Content: fmt.Sprintf("Removed note %q.", args.Key)}, nil
	})
