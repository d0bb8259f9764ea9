// Package chunk cuts an extracted document into the pieces a knowledge
// base indexes and a bot is shown: each small enough to embed and to
// quote, each saying where in the document it came from.
//
// Chunks follow the document's structure. A heading starts a section;
// a section's paragraphs, list items and code are packed into chunks of
// up to MaxTokens, consecutive chunks of one section sharing Overlap
// tokens so a sentence cut at the border is whole in one of them. A
// table is one chunk when it fits, else it is cut between rows with its
// header row repeated; a question and answer pair is always one chunk.
// Split is deterministic: the same document gives the same chunks.
//
// Tokens are counted approximately, as words*4/3 rounded up (English
// runs about 0.75 words a token in the common BPE vocabularies); no
// tokenizer is needed and the count errs towards smaller chunks.
package chunk
