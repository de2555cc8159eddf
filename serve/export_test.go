package serve

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

func apiAt(path string) (*api, error) {
	i := slices.IndexFunc(apis, func(a *api) bool { return a.path == path })
	if i < 0 {
		return nil, fmt.Errorf("no API at %s", path)
	}
	return apis[i], nil
}

// Unread is what the counting pass and the API's reader made of one
// request.
type Unread struct {
	// Want is the reader's count (env.counter.Transcript).
	Want int
	// Counted is whether the pass read the request; Msgs are then the
	// messages of the list it built, ReaderMsgs the reader's.
	Counted          bool
	Msgs, ReaderMsgs []compact.Message
	// Bounds[i] is what the pass answered for Triggers[i], with a count
	// cache that knew nothing; Exact[i] whether it counted every message.
	Triggers []int
	Bounds   []int
	Exact    []bool
	// Plain is the byte bound letThrough starts from (boundPlain), with a
	// count cache that knew nothing; PlainOK false when it has none.
	Plain   int
	PlainOK bool
}

// UnreadCount runs the counting pass and the reader on body, a request to
// path, for model, at thresholds from 0 (count everything) to past the
// reader's count.
func UnreadCount(s *Server, path, model string, body []byte) (Unread, error) {
	var u Unread
	a, err := apiAt(path)
	if err != nil {
		return u, err
	}
	env, err := s.env(model)
	if err != nil {
		return u, err
	}
	read := func() (*shape, error) {
		s.counts = newCountCache(maxCachedCounts)
		return shapeOf(a, body)
	}
	sh, err := read()
	if err != nil {
		return u, err
	}
	u.Plain, u.PlainOK = s.boundPlain(env, sh)
	v, err := sh.read()
	if err != nil {
		// The pass must decline whatever the reader refuses.
		sh, _ = read()
		_, _, u.Counted = s.countUnread(env, sh, 0)
		return u, err
	}
	u.Want = env.counter.Transcript(v.t)
	if v.place() == nil {
		for i, g := range v.groups {
			if g[0] >= 0 {
				u.ReaderMsgs = append(u.ReaderMsgs, v.t.Messages[i])
			}
		}
	}
	for _, trigger := range []int{0, u.Want / 2, u.Want + 1, 2*u.Want + 100, 1 << 40} {
		sh, _ := read()
		n, exact, ok := s.countUnread(env, sh, trigger)
		if !ok {
			return u, nil
		}
		u.Triggers, u.Bounds, u.Exact = append(u.Triggers, trigger), append(u.Bounds, n), append(u.Exact, exact)
	}
	u.Counted = true
	uc := unreadCount{view: new(format.CountView)}
	uc.build(sh)
	u.Msgs = uc.msgs
	return u, nil
}

// DropCacheControl is the fuzz test's drop, for the tests outside the
// package that compare elements but for Anthropic's moving breakpoints.
func DropCacheControl(x any) { drop(x) }

// Rewrite is Server.rewrite for the API at path (benchmarks).
func Rewrite(s *Server, ctx context.Context, path string, hdr http.Header, body []byte) []byte {
	a, _ := apiAt(path)
	return s.rewrite(ctx, a, hdr, body, false).body
}
