package configdiff

import (
	"fmt"
	"strings"
)

// context is how many unchanged lines surround each hunk.
const context = 3

// maxCells bounds the line-matching table; beyond it the texts are shown
// as wholly replaced rather than spending quadratic memory.
const maxCells = 4_000_000

// Unified returns a unified diff of two texts ("" when equal).
func Unified(a, b, aName, bName string) string {
	if a == b {
		return ""
	}
	al, bl := lines(a), lines(b)
	ops := lineOps(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	var changed []int
	for i, o := range ops {
		if o.kind != ' ' {
			changed = append(changed, i)
		}
	}
	// Changes closer than two contexts apart share a hunk.
	for k := 0; k < len(changed); {
		first, last := changed[k], changed[k]
		for k++; k < len(changed) && changed[k]-last <= 2*context; k++ {
			last = changed[k]
		}
		writeHunk(&out, ops[max(first-context, 0):min(last+context+1, len(ops))])
	}
	return out.String()
}

type op struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int // line numbers (1-based) in a and b before this line
}

func writeHunk(out *strings.Builder, ops []op) {
	var na, nb int
	for _, o := range ops {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", ops[0].a+1, na, ops[0].b+1, nb)
	for _, o := range ops {
		out.WriteByte(o.kind)
		out.WriteString(o.text)
		out.WriteByte('\n')
	}
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// lineOps aligns the lines by their longest common subsequence.
func lineOps(a, b []string) []op {
	if (len(a)+1)*(len(b)+1) > maxCells {
		var ops []op
		for i, l := range a {
			ops = append(ops, op{'-', l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, op{'+', l, len(a), j})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i, j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
