package api

import (
	"errors"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// This file turns platform values into the wire types of apiclient, so the
// platform's Go types can change without changing the API.

// fromPlatform maps a platform error; its message is caller-safe by the
// platform's contract, but an internal one is replaced anyway.
func fromPlatform(err error) (*apiclient.Error, bool) {
	var pe *platform.Error
	if !errors.As(err, &pe) || pe.Code == platform.CodeInternal {
		return nil, false
	}
	code := string(pe.Code)
	if _, known := statusOf[code]; !known {
		return nil, false
	}
	return &apiclient.Error{Code: code, Message: pe.Message, Details: details(pe.Details)}, true
}

// details converts platform details; nil stays nil.
func details(in []platform.Detail) []apiclient.Detail {
	var out []apiclient.Detail
	for _, d := range in {
		out = append(out, apiclient.Detail{Pointer: d.Pointer, Message: d.Message})
	}
	return out
}

// listOptions reads ?cursor= and ?limit=.
func listOptions(c *gin.Context) (platform.ListOptions, error) {
	opts := platform.ListOptions{Cursor: c.Query("cursor")}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return opts, badRequest("/limit", "must be a positive integer")
		}
		opts.Limit = n
	}
	return opts, nil
}

func keyOut(k platform.APIKey) apiclient.APIKey {
	return apiclient.APIKey{
		ID: k.ID, Name: k.Name, Kind: k.Kind, Scopes: k.Scopes, Bot: k.BotID, Origins: k.Origins,
		Prefix: k.Prefix, Last4: k.Last4, Key: k.Publishable, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
		LastUsedAt: k.LastUsedAt, CreatedAt: k.CreatedAt,
	}
}

func newKeyOut(k platform.CreatedKey) apiclient.NewAPIKey {
	return apiclient.NewAPIKey{APIKey: keyOut(k.APIKey), Key: k.Key}
}

func botOut(b platform.Bot) apiclient.Bot {
	return apiclient.Bot{ID: b.ID, Slug: b.Slug, Name: b.Name, PublishedVersion: b.PublishedVersion,
		RequirePassingTests: b.RequirePassingTests, CanaryVersion: b.CanaryVersion, CanaryPercent: b.CanaryPercent, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}

func versionOut(v platform.Version) apiclient.Version {
	return apiclient.Version{ID: v.ID, Number: v.Number, Fingerprint: v.Fingerprint, Config: v.Config, Tests: v.Tests,
		Prompt: v.Prompt, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, Warnings: details(v.Warnings)}
}

// versionSummary leaves out the config and prompt, which lists do not need.
func versionSummary(v platform.Version) apiclient.Version {
	out := versionOut(v)
	out.Config, out.Tests, out.Prompt = nil, nil, ""
	return out
}

func mapAll[S, T any](in []S, f func(S) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
