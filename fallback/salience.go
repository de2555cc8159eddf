package fallback

import "math/bits"

// salience is what a name has earned in the window, from signals that
// hold for any agent and any project: who produced it, whether the agent
// acted on it after a tool showed it, how often and how lately it came up,
// and whether an error named it.
type salience struct {
	// by is the weightiest producer that holds the name.
	by source
	// actedOn: a tool's output showed it, and later the agent's own
	// arguments, edits or words used it.
	actedOn bool
	// defined: a file the agent read declares it.
	defined bool
	// messages counts the distinct messages that hold it.
	messages int
	erred    bool
	// last is the last message that holds it.
	last int
}

// producerWeight is what each producer gives a name. The agent's own acts
// (what it wrote into a file, passed to a call, said) outrank what a tool
// printed: a name the agent produced is one it works with, and works with
// again. The person's words weigh little here: their asks are quoted
// whole under Task snapshot, names and all.
var producerWeight = [nSources]int{srcEdit: 12, srcArgs: 12, srcAgent: 12, srcUser: 2, srcThinking: 8, srcError: 8, srcResult: 0}

// salienceOf sums up a reference's sightings.
func (r *refStat) salience() salience {
	s := salience{by: srcResult, last: r.latest(), messages: r.messages()}
	best := -1
	for src := source(0); src < nSources; src++ {
		if r.msgs[src] > 0 && producerWeight[src] > best {
			s.by, best = src, producerWeight[src]
		}
	}
	s.erred = r.msgs[srcError] > 0
	s.defined = r.defined
	if shown := r.firstMsg[srcResult]; shown >= 0 {
		for _, src := range []source{srcArgs, srcEdit, srcAgent} {
			if r.lastMsg[src] > shown {
				s.actedOn = true
			}
		}
	}
	return s
}

// score folds the signals into one number, for a window of n messages:
// repetition counts by its logarithm (the tenth sighting adds less than
// the second), the producer and an act on the name add fixed amounts, and
// recency adds up to a few points for a name the window's end still holds.
func (s salience) score(n int) int {
	v := 10*bits.Len(uint(s.messages)) + producerWeight[s.by]
	if s.actedOn {
		v += 6
	}
	if s.erred {
		v += 4
	}
	if s.defined {
		v += defBoost
	}
	if n > 0 && s.last >= 0 {
		v += 8 * (s.last + 1) / n
	}
	return v
}

// defBoost is what a declaration in a file the agent read adds.
const defBoost = 6
