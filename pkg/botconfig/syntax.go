package botconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxDepth bounds nesting. Real configs nest about eight levels; the bound
// keeps hostile documents from costing deep recursion here and in the schema
// validator.
const maxDepth = 64

// checkSyntax rejects what is not exactly one JSON object of sane size, and
// duplicate keys, which encoding/json would silently resolve to the last one.
func checkSyntax(data []byte) Problems {
	switch {
	case len(data) > MaxConfigSize:
		return Problems{{"", fmt.Sprintf("config is larger than %d KiB; move long background text elsewhere or split the bot", MaxConfigSize>>10)}}
	case len(bytes.TrimSpace(data)) == 0:
		return Problems{{"", "config is empty; it must be a JSON object with at least basic_settings.name"}}
	}
	s := &scanner{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	s.dec.UseNumber()
	tok, err := s.dec.Token()
	if err != nil {
		return Problems{s.syntaxProblem(err)}
	}
	if tok != json.Delim('{') {
		return Problems{{"", "config must be a JSON object ({...})"}}
	}
	if err := s.object("", 1); err != nil {
		return Problems{s.syntaxProblem(err)}
	}
	end := s.dec.InputOffset()
	if _, err := s.dec.Token(); err != io.EOF {
		rest := data[end:]
		line, col := lineCol(data, end+int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))))
		return Problems{{"", fmt.Sprintf("unexpected data after the config at line %d, column %d; a file holds exactly one JSON object", line, col)}}
	}
	return s.ps
}

// scanner walks a document token by token.
type scanner struct {
	data []byte
	dec  *json.Decoder
	ps   Problems
}

var errTooDeep = errors.New("too deep")

// value reads one value whose first token is tok.
func (s *scanner) value(tok json.Token, at string, depth int) error {
	switch tok {
	case json.Delim('{'):
		return s.object(at, depth+1)
	case json.Delim('['):
		return s.array(at, depth+1)
	}
	return nil
}

func (s *scanner) object(at string, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	seen := map[string]bool{}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			s.ps.add(ptr(at, key), "key %q appears twice in this object; keep one (the last would silently win)", key)
		}
		seen[key] = true
		if tok, err = s.dec.Token(); err != nil {
			return err
		}
		if err := s.value(tok, ptr(at, key), depth); err != nil {
			return err
		}
	}
	_, err := s.dec.Token()
	return err
}

func (s *scanner) array(at string, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	for i := 0; s.dec.More(); i++ {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		if err := s.value(tok, ptr(at, i), depth); err != nil {
			return err
		}
	}
	_, err := s.dec.Token()
	return err
}

// syntaxProblem turns a scanning error into a problem with line and column.
func (s *scanner) syntaxProblem(err error) Problem {
	if errors.Is(err, errTooDeep) {
		line, col := lineCol(s.data, s.dec.InputOffset()-1) // the bracket just read
		return Problem{"", fmt.Sprintf("config nests more than %d levels deep at line %d, column %d; flatten it", maxDepth, line, col)}
	}
	// Decoder.Token reports offsets inconsistently (before or after the bad
	// byte, depending on the state); Unmarshal always reports the offset just
	// past it, so ask it where the error is.
	var syn *json.SyntaxError
	if !errors.As(json.Unmarshal(s.data, new(any)), &syn) {
		return Problem{"", "invalid JSON: " + err.Error()}
	}
	offset, msg := syn.Offset-1, syn.Error()
	if syn.Offset >= int64(len(s.data)) && strings.HasPrefix(msg, "unexpected end") {
		offset, msg = int64(len(s.data)), "unexpected end of input (an unclosed {, [ or string?)"
	}
	line, col := lineCol(s.data, offset)
	return Problem{"", fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg)}
}

// lineCol gives the 1-based line and column (in bytes) of the byte at
// offset; an offset at the end points just past the last byte.
func lineCol(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
