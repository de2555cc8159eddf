package serve

import (
	"fmt"
	"slices"

	"github.com/compactkit/compact"
)

// UnreadCount counts body, a request to path, with the counting pass and
// with the API's reader, for model: got and ok are the pass's answer, want
// the reader's count, gotMsgs and wantMsgs the messages of the list each
// made (the reader's with only what the counter reads).
func UnreadCount(s *Server, path, model string, body []byte) (got int, ok bool, want int, gotMsgs, wantMsgs []compact.Message, err error) {
	i := slices.IndexFunc(apis, func(a *api) bool { return a.path == path })
	if i < 0 {
		return 0, false, 0, nil, nil, fmt.Errorf("no API at %s", path)
	}
	sh, err := shapeOf(apis[i], body)
	if err != nil {
		return 0, false, 0, nil, nil, err
	}
	env, err := s.env(model)
	if err != nil {
		return 0, false, 0, nil, nil, err
	}
	got, ok = s.countUnread(env, sh)
	if ok {
		uc := unreadCount{arena: new([]byte)}
		uc.build(sh)
		gotMsgs = uc.msgs
	}
	v, err := sh.read()
	if err != nil {
		return got, ok, 0, gotMsgs, nil, err
	}
	want = env.counter.Transcript(v.t)
	if v.place() == nil {
		for i, g := range v.groups {
			if g[0] >= 0 {
				wantMsgs = append(wantMsgs, v.t.Messages[i])
			}
		}
	}
	return got, ok, want, gotMsgs, wantMsgs, nil
}
