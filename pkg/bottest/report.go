package bottest

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// FileResults are the results of one test file.
type FileResults struct {
	// Name is the file (or bot) the tests came from.
	Name    string
	Results []Result
	// Err, when set, means the file could not run at all.
	Err error
}

// WriteText prints one line per test and a summary, for people.
func WriteText(w io.Writer, files []FileResults) (passed, failed int) {
	for _, f := range files {
		if f.Err != nil {
			fmt.Fprintf(w, "FAIL %s: %v\n", f.Name, f.Err)
			failed++
			continue
		}
		for _, r := range f.Results {
			if r.Passed {
				passed++
				fmt.Fprintf(w, "ok   %s: %s\n", f.Name, r.Name)
				continue
			}
			failed++
			fmt.Fprintf(w, "FAIL %s: %s\n", f.Name, r.Name)
			for _, msg := range r.Failures {
				fmt.Fprintf(w, "       %s\n", msg)
			}
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	return passed, failed
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Errors  int          `xml:"errors,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name   string      `xml:"name,attr"`
	Tests  int         `xml:"tests,attr"`
	Fails  int         `xml:"failures,attr"`
	Errors int         `xml:"errors,attr"`
	Cases  []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Class   string        `xml:"classname,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Error   *junitFailure `xml:"error,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the results as JUnit XML, one testsuite per file, for
// CI systems.
func WriteJUnit(w io.Writer, files []FileResults) error {
	var all junitSuites
	for _, f := range files {
		s := junitSuite{Name: f.Name}
		if f.Err != nil {
			s.Tests, s.Errors = 1, 1
			s.Cases = []junitCase{{Name: "load", Class: f.Name, Time: "0", Error: &junitFailure{Message: "the test file could not run", Text: f.Err.Error()}}}
		}
		for _, r := range f.Results {
			c := junitCase{Name: r.Name, Class: f.Name, Time: fmt.Sprintf("%.3f", float64(r.DurationMS)/1000)}
			if !r.Passed {
				c.Failure = &junitFailure{Message: r.Failures[0], Text: strings.Join(r.Failures, "\n")}
				s.Fails++
			}
			s.Tests++
			s.Cases = append(s.Cases, c)
		}
		all.Tests += s.Tests
		all.Fails += s.Fails
		all.Errors += s.Errors
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
