// Package cite numbers the passages a bot is shown from its knowledge
// bases and finds the ones its answer cites.
//
// A Book lives for one run of a dialog: every passage it is given gets a
// number, [1], [2], ..., the same passage keeping its number when it is
// found again. Format writes passages for the model with their numbers;
// Cited reads an answer's [n] markers back into Citations, in the order
// they first appear, leaving out numbers the Book never gave.
//
//	book := cite.NewBook()
//	text := book.Format(passages) // "[1] Refunds (Policies > Refunds)\n..."
//	cits := book.Cited(answer)    // [{N: 1, Source: "src_…", ...}]
//
// Markers scans streamed text for markers as they first appear.
package cite
