// Package configdiff compares two JSON documents, such as two versions of a
// bot's config: a list of changes by JSON pointer (RFC 6901), and a unified
// text diff of the pretty-printed documents for people.
//
//	d, err := configdiff.Compare(oldJSON, newJSON, "v1", "v2")
//	for _, c := range d.Changes { fmt.Println(c.Op, c.Pointer) }
//	fmt.Print(d.Unified)
package configdiff
