// Package eval measures what a compaction keeps, so that settings and
// summarizers can be compared on a user's own sessions, with or without
// labels. cmd/compact's "compact eval" prints its figures.
//
// # Future-use recall
//
// The label-free measure is the one the shared corpus's reference scorer
// (eval/future_use.py) defines, reproduced exactly: a session in any format
// is converted to OpenAI Chat messages; at each cut point (a share of the
// messages, moved back so no cut falls between a call and its results) the
// prefix before the cut is compacted, forced, at 90% of its own tokens (at
// least 4,000). Facts are the names a next turn reaches for, found by eight
// patterns (Facts): paths, dotted calls, snake_case and camelCase names,
// URLs, hex ids, versions, numbers. A fact is needed when the dropped
// middle held it, no kept message did, and the agent used it (in its text
// or its tool-call arguments) after the cut before any tool output or user
// message showed it again. Recall is the share of needed facts found in
// the compacted transcript as written (paths also by their last two
// segments), micro-averaged: every needed fact of every cut counts once.
//
// In the same run, at the handoff's size: recency (the newest dropped
// text cut to the handoff's length), head+tail (the newest whole dropped
// messages that fit in it: a longer verbatim tail), and the prune strategy
// (old tool outputs masked, at its own size, reported beside). Each row
// lists the facts it lost with their kind and who wrote them first in the
// dropped middle (the agent's arguments or text, a tool's output, the
// user), which is what tells a missing mechanism from bad luck.
//
// # Decay
//
// A session is replayed message by message into a growing transcript,
// compacted (not forced) whenever it reaches the compactor's trigger, each
// handoff folding the one before, up to Options.Decay compactions. After
// each, recall is measured as above over everything dropped so far. The
// window is a quarter of the session (at least 32,000 tokens) unless
// Options.DecayWindow sets it, so long sessions are compacted several
// times.
//
// # Labels
//
// Labelled transcripts (the corpus's handoff/ layout: NAME.labels.json with
// exact must-keep substrings, the latest ask, secrets) are scored as its
// score_handoff.py scores them, three ways: the handoff of exactly the
// labels' middle window, the whole compacted transcript, and its handoff
// alone.
package eval
