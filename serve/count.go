package serve

import (
	"bytes"
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/jsonscan"
)

// A request the proxy has never seen (a new conversation, or any after a
// restart) cannot be bounded from cached counts, and its bytes bound its
// tokens only loosely: a 100 KB request to a 128K-token model is over the
// threshold by its bytes, though it holds some 25K tokens. Reading it with
// package format costs several times what counting it does, for what an
// unchanged request never needs: each message's source records,
// fingerprint and ID, kept for writing it back. So such a request is first
// counted by a pass that builds, with format.CountView, only what the
// token counter reads of the messages it counts, for the shapes of Chat
// Completions and Responses requests whose reading the view mirrors. It
// declines where the view does (and the request is read in full), and
// also on invalid UTF-8, invalid JSON, or a model whose count is an
// estimate. TestCountUnreadMatchesReader holds it to the reader on every
// request shape of the corpus and of the generators.

// unreadCount is what the counting pass made of a request's list.
type unreadCount struct {
	// msgs are the messages of the list, with only the fields the token
	// counter reads; their strings point into the body or the view.
	msgs []compact.Message
	// groups[i] are the elements of message i, [from, to).
	groups [][2]int
	view   *format.CountView
}

func (uc *unreadCount) release() {
	if uc.view != nil {
		uc.view.Release()
	}
	uc.view, uc.msgs = nil, nil
}

// countMargin: once a request's bound is over the threshold, it is counted
// until it is under the threshold less 1/countMargin of it (about 11K
// tokens of gpt-4o's 89K, the next few turns of a conversation).
const countMargin = 8

// countUnread bounds the tokens of the request sh under trigger with as
// little counting as it takes, without reading it with package format: it
// builds the list's messages (see above) and bounds each by its elements'
// bounds (elemBound: a cached count, or bytes), then counts messages
// exactly, the largest bounds first, until the sum is under trigger (less
// a margin, see countMargin) or every message is counted. n is then an upper bound of what
// env.counter.Transcript would count of the reader's transcript, and
// exactly that count when exact (every message counted). A request that
// is under the threshold needs no more; one that is not was counted in
// full. ok is false when the pass declines (see above). It teaches the
// count cache what it counted, as learn does for a request read in full.
func (s *Server) countUnread(env *modelEnv, sh *shape, trigger int) (n int, exact, ok bool) {
	if !env.counter.Exact() || !countable(sh) {
		return 0, false, false
	}
	outside, ok := s.outsideCount(env, sh)
	if !ok {
		return 0, false, false
	}
	uc := unreadCount{view: format.NewCountView()}
	defer uc.release()
	// Only the messages counted are built. A Chat Completions element is
	// one message; a Responses assistant turn spans the elements of its
	// items, found from their kinds.
	var message func(i int) (compact.Message, bool)
	if sh.api.format == format.OpenAIChat {
		uc.groups = make([][2]int, len(sh.elems))
		for k := range uc.groups {
			uc.groups[k] = [2]int{k, k + 1}
		}
		message = func(i int) (compact.Message, bool) { return uc.view.ChatMessage(sh.elem(i)) }
	} else {
		if !uc.respGroups(sh) {
			return 0, false, false
		}
		message = func(i int) (compact.Message, bool) { return uc.respMessage(sh, i) }
	}
	bounds := make([]int, len(uc.groups))
	order := make([]int, len(uc.groups))
	n = outside
	for i, g := range uc.groups {
		for e := g[0]; e < g[1]; e++ {
			bounds[i] += s.elemBound(env, sh, e, 1)
		}
		n += bounds[i]
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bounds[b], bounds[a]) })
	groups := make([][2]int, 0, len(order))
	counts := make([]int, 0, len(order))
	// Counting stops with room for the conversation to grow, or each of
	// its next requests would be over by its bound and count a little.
	target := trigger - trigger/countMargin
	for _, i := range order {
		if n < target {
			break
		}
		m, ok := message(i)
		if !ok {
			return 0, false, false
		}
		c := env.counter.Message(m)
		n += c - bounds[i]
		groups, counts = append(groups, uc.groups[i]), append(counts, c)
	}
	s.remember(env, sh, groups, counts, outside)
	return n, len(counts) == len(order), true
}

// countable reports whether the pass may read sh: a request of an API it
// knows, valid JSON in valid UTF-8 (the readers replace invalid bytes with
// U+FFFD, which the pass does not). A lone surrogate escape is read as
// U+FFFD by both (jsonscan.AppendUnescaped, as Unquote).
func countable(sh *shape) bool {
	switch sh.api.format {
	case format.OpenAIChat, format.OpenAIResponses:
	default:
		return false
	}
	return sh.hasList && utf8.Valid(sh.body) && jsonscan.Valid(sh.body)
}

// build builds the messages of sh's list; false when it declines.
func (uc *unreadCount) build(sh *shape) bool {
	if sh.api.format == format.OpenAIChat {
		return uc.chat(sh)
	}
	return uc.responses(sh)
}

// outsideCount counts what lies beside the list (tool definitions, a
// system prompt outside it, the reply's priming): cached by the bytes of
// the members beside the list, or read with the API's reader from the
// request with its list emptied, which costs what those members cost.
func (s *Server) outsideCount(env *modelEnv, sh *shape) (int, bool) {
	key := s.counts.besideKey(env.salt, sh.body, sh.beside)
	if n, ok := s.counts.get(key); ok {
		return n, true
	}
	t, err := format.Read(bytes.NewReader(withList(sh.body, sh.list, nil)), "request", sh.api.format)
	if err != nil || len(t.Records) > 0 {
		return 0, false
	}
	n := env.counter.Transcript(t)
	s.counts.put(key, n)
	return n, true
}

// chat builds the messages of a Chat Completions list: one per element.
func (uc *unreadCount) chat(sh *shape) bool {
	uc.msgs = make([]compact.Message, 0, len(sh.elems))
	uc.groups = make([][2]int, 0, len(sh.elems))
	for k := range sh.elems {
		m, ok := uc.view.ChatMessage(sh.elem(k))
		if !ok {
			return false
		}
		uc.msgs = append(uc.msgs, m)
		uc.groups = append(uc.groups, [2]int{k, k + 1})
	}
	return true
}

// responses builds the messages of a Responses input list: an assistant
// turn's items (its messages, reasoning and function calls) make one
// message, as the reader makes them.
func (uc *unreadCount) responses(sh *shape) bool {
	if !uc.respGroups(sh) {
		return false
	}
	uc.msgs = make([]compact.Message, len(uc.groups))
	for i := range uc.groups {
		var ok bool
		if uc.msgs[i], ok = uc.respMessage(sh, i); !ok {
			return false
		}
	}
	return true
}

// respGroups finds the elements of each message of a Responses input
// list, reading of each item only its kind.
func (uc *unreadCount) respGroups(sh *shape) bool {
	uc.groups = make([][2]int, 0, len(sh.elems))
	open := false
	for k := range sh.elems {
		turn, ok := uc.view.ResponsesItem(sh.elem(k), nil)
		switch {
		case !ok:
			return false
		case turn && open:
			uc.groups[len(uc.groups)-1][1] = k + 1
			continue
		}
		open = turn
		uc.groups = append(uc.groups, [2]int{k, k + 1})
	}
	return true
}

// respMessage builds message i of a Responses list whose groups are known.
func (uc *unreadCount) respMessage(sh *shape, i int) (compact.Message, bool) {
	var m compact.Message
	for k := uc.groups[i][0]; k < uc.groups[i][1]; k++ {
		if _, ok := uc.view.ResponsesItem(sh.elem(k), &m); !ok {
			return m, false
		}
	}
	return m, true
}
