package extract

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// qaBlock is one question and its answer.
func qaBlock(q, a string) Block {
	return Block{Kind: QA, Text: "Q: " + q + "\nA: " + a}
}

// questionColumns and answerColumns are the header names a Q&A file may
// use, lower-cased.
var (
	questionColumns = []string{"question", "q", "questions", "frage"}
	answerColumns   = []string{"answer", "a", "answers", "antwort"}
)

// csvQA reads a CSV whose header names a question and an answer column.
func csvQA(text string) (*Document, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return nil, fail("the CSV file is empty")
	}
	if err != nil {
		return nil, csvError(err)
	}
	qi, ai := column(header, questionColumns), column(header, answerColumns)
	if qi < 0 || ai < 0 {
		return nil, fail("the CSV header must name a %q and an %q column, it has %q", "question", "answer", strings.Join(header, ","))
	}
	doc := &Document{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		if qi >= len(rec) || ai >= len(rec) {
			return nil, fail("CSV line %d has %d fields, too few for the question and answer columns", line, len(rec))
		}
		q, a := strings.TrimSpace(rec[qi]), strings.TrimSpace(rec[ai])
		if q == "" && a == "" {
			continue
		}
		if q == "" || a == "" {
			doc.Warnings = append(doc.Warnings, "CSV line "+strconv.Itoa(line)+" has a question or an answer but not both; skipped")
			continue
		}
		doc.Blocks = append(doc.Blocks, qaBlock(q, a))
	}
	return doc, nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fail("the CSV file is malformed at line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return fail("the CSV file is malformed: %v", err)
}

func column(header []string, names []string) int {
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		for _, n := range names {
			if h == n {
				return i
			}
		}
	}
	return -1
}

// jsonlQA reads one {"question": ..., "answer": ...} object a line.
func jsonlQA(text string) (*Document, error) {
	doc := &Document{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, len(text)+1)
	for line := 1; sc.Scan(); line++ {
		raw := strings.TrimSpace(sc.Text())
		if raw == "" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, fail("JSONL line %d is not a JSON object: %v", line, err)
		}
		q, a := field(obj, questionColumns), field(obj, answerColumns)
		if q == "" || a == "" {
			return nil, fail("JSONL line %d needs a non-empty string %q and %q", line, "question", "answer")
		}
		doc.Blocks = append(doc.Blocks, qaBlock(q, a))
	}
	return doc, nil
}

func field(obj map[string]any, names []string) string {
	for k, v := range obj {
		for _, n := range names {
			if strings.EqualFold(k, n) {
				if s, ok := v.(string); ok {
					return strings.TrimSpace(s)
				}
			}
		}
	}
	return ""
}

// jsonQA reads a JSON array of {"question": ..., "answer": ...} objects.
func jsonQA(text string) (*Document, error) {
	var list []map[string]any
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		return nil, fail("the JSON must be an array of {\"question\", \"answer\"} objects: %v", err)
	}
	doc := &Document{}
	for i, obj := range list {
		q, a := field(obj, questionColumns), field(obj, answerColumns)
		if q == "" || a == "" {
			return nil, fail("JSON item %d needs a non-empty string %q and %q", i, "question", "answer")
		}
		doc.Blocks = append(doc.Blocks, qaBlock(q, a))
	}
	return doc, nil
}
