package botconfig

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a config: where (an RFC 6901 JSON pointer
// into the document, "" for the whole document) and what to do about it.
type Problem struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Problems is every problem found in a config, sorted by pointer. It is the
// error Load, Validate and Compile return for an invalid config.
type Problems []Problem

// Error lists the problems one per line, as "POINTER: message".
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = DisplayPointer(p.Pointer) + ": " + p.Message
	}
	return strings.Join(lines, "\n")
}

// DisplayPointer is how a pointer reads in messages: the root is "/".
func DisplayPointer(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// add records a problem; the message is formatted like fmt.Sprintf.
func (ps *Problems) add(ptr, format string, args ...any) {
	*ps = append(*ps, Problem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

// sorted orders problems by pointer, keeping the order of problems at the same
// pointer, and drops exact duplicates. Pointer segments that are indexes sort
// numerically so /tools/10 comes after /tools/9.
func (ps Problems) sorted() Problems {
	sort.SliceStable(ps, func(i, j int) bool { return pointerLess(ps[i].Pointer, ps[j].Pointer) })
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}

func pointerLess(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		an, aerr := strconv.Atoi(as[i])
		bn, berr := strconv.Atoi(bs[i])
		if aerr == nil && berr == nil {
			return an < bn
		}
		return as[i] < bs[i]
	}
	return len(as) < len(bs)
}

// ptr builds a JSON pointer from its parent and one more token, escaping "~"
// and "/" as RFC 6901 requires. Ints are array indexes.
func ptr(parent string, token any) string {
	switch t := token.(type) {
	case int:
		return parent + "/" + strconv.Itoa(t)
	case string:
		if strings.ContainsAny(t, "~/") {
			t = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
		}
		return parent + "/" + t
	default:
		panic(fmt.Sprintf("botconfig: pointer token of type %T", token))
	}
}
