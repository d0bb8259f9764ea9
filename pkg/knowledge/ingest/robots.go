package ingest

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/outbound"
)

// UserAgent is how the indexer names itself to web servers, and the
// product token whose robots.txt group it obeys ("*" when none names
// it).
const UserAgent = "ParleyBot/1.0"

const robotsToken = "parleybot"

// robotsTTL is how long a host's robots.txt is kept: one sitemap's
// pages, fetched within it, read it once.
const robotsTTL = time.Hour

// maxRobotsBytes bounds a robots.txt read (RFC 9309 asks crawlers to
// read at least 500 KiB).
const maxRobotsBytes = 512 << 10

// robotsRule is one Allow or Disallow line of the group that applies.
type robotsRule struct {
	allow bool
	path  string
}

type robotsEntry struct {
	rules   []robotsRule
	expires time.Time
}

// robotsCache holds each host's robots.txt rules for robotsTTL.
type robotsCache struct {
	mu    sync.Mutex
	hosts map[string]robotsEntry
}

// robotsAllowed says whether the host's robots.txt lets UserAgent fetch
// raw; when it does not, the error says so in words for the source's
// owner. A robots.txt that is missing (4xx) allows everything; one the
// server fails to answer (5xx, a network error) is a transient error,
// retried later.
func (w *Worker) robotsAllowed(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return permanent("the URL cannot be requested: %v", err)
	}
	origin := u.Scheme + "://" + u.Host
	now := w.opts.Now()
	w.robots.mu.Lock()
	e, ok := w.robots.hosts[origin]
	w.robots.mu.Unlock()
	if !ok || now.After(e.expires) {
		rules, err := w.fetchRobots(ctx, origin)
		if err != nil {
			return err
		}
		e = robotsEntry{rules: rules, expires: now.Add(robotsTTL)}
		w.robots.mu.Lock()
		if w.robots.hosts == nil {
			w.robots.hosts = map[string]robotsEntry{}
		}
		w.robots.hosts[origin] = e
		w.robots.mu.Unlock()
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !allowedBy(e.rules, path) {
		return permanent("%s/robots.txt disallows %s for %s: the page is not fetched", origin, u.EscapedPath(), UserAgent)
	}
	return nil
}

func (w *Worker) fetchRobots(ctx context.Context, origin string) ([]robotsRule, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/robots.txt", nil)
	if err != nil {
		return nil, permanent("the URL cannot be requested: %v", err)
	}
	req.Header.Set("User-Agent", UserAgent)
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fetchError(origin, err) // the host, not its robots.txt, is what the owner must fix
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, fmt.Errorf("fetching %s/robots.txt: the server answered %s", origin, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, nil // no robots.txt: everything is allowed
	}
	body, _, err := outbound.ReadBody(resp.Body, maxRobotsBytes)
	if err != nil {
		return nil, fmt.Errorf("fetching %s/robots.txt: %w", origin, err)
	}
	return parseRobots(string(body), robotsToken), nil
}

// parseRobots returns the rules of the group for token, or of the "*"
// group when no group names it (RFC 9309: groups naming the same agent
// are merged; several User-agent lines may open one group).
func parseRobots(text, token string) []robotsRule {
	var mine, star []robotsRule
	var forMine, forStar, mineSeen, inAgents bool
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if !inAgents {
				forMine, forStar = false, false
			}
			inAgents = true
			agent := strings.ToLower(value)
			if agent == "*" {
				forStar = true
			} else if strings.HasPrefix(token, agent) || strings.HasPrefix(agent, token) {
				forMine, mineSeen = true, true
			}
		case "allow", "disallow":
			inAgents = false
			if value == "" {
				continue // "Disallow:" allows everything
			}
			r := robotsRule{allow: key == "allow", path: value}
			if forMine {
				mine = append(mine, r)
			}
			if forStar {
				star = append(star, r)
			}
		default:
			inAgents = false
		}
	}
	if mineSeen {
		return mine
	}
	return star
}

// allowedBy applies the longest matching rule; on a tie Allow wins; no
// match allows.
func allowedBy(rules []robotsRule, path string) bool {
	best, allow := -1, true
	for _, r := range rules {
		if !robotsMatch(r.path, path) {
			continue
		}
		if n := len(r.path); n > best || n == best && r.allow {
			best, allow = n, r.allow
		}
	}
	return allow
}

// robotsMatch matches a rule's path pattern: a prefix, where "*" is any
// run of characters and a final "$" anchors the end.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	pos := len(parts[0])
	if len(parts) == 1 {
		return !anchored || pos == len(path)
	}
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(path[pos:], p)
		if i < 0 {
			return false
		}
		pos += i + len(p)
	}
	if anchored {
		return len(path)-len(last) >= pos && strings.HasSuffix(path, last)
	}
	return strings.Contains(path[pos:], last)
}
