package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"pgregory.net/rapid"
)

// testModel runs random sequences of saves (over the latest, over a stale
// parent, as a new session), prunes and deletes against the store and a
// model of it (each session's chain of committed IDs), and checks after
// every step that Latest and History agree with the model.
func testModel(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, checkpoint.Options{})
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		sessions := []string{fmt.Sprintf("m%d-a", run), fmt.Sprintf("m%d-b", run)}
		chains := map[string][]string{} // session -> IDs, oldest first, pruned ones dropped
		all := map[string][]string{}    // session -> every committed ID, for stale parents
		for step := range rapid.IntRange(1, 25).Draw(rt, "steps") {
			session := rapid.SampledFrom(sessions).Draw(rt, "session")
			chain := chains[session]
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 6: // save over the latest (or start the session)
				c := Sample(session, 0)
				c.Task = fmt.Sprint("step ", step)
				parent := ""
				if len(chain) > 0 {
					parent = chain[len(chain)-1]
				}
				if err := s.Save(ctx, c, parent); err != nil {
					rt.Fatalf("save over the latest: %v", err)
				}
				chains[session] = append(chain, c.ID)
				all[session] = append(all[session], c.ID)
			case op < 8: // a stale writer: any parent but the latest
				parent := ""
				if old := all[session]; len(old) > 0 && rapid.Bool().Draw(rt, "old parent") {
					parent = rapid.SampledFrom(old).Draw(rt, "parent")
				}
				if len(chain) > 0 && parent == chain[len(chain)-1] {
					continue
				}
				if len(chain) == 0 && parent == "" {
					continue // that is a valid first save
				}
				err := s.Save(ctx, Sample(session, 0), parent)
				if !errors.Is(err, checkpoint.ErrConflict) {
					rt.Fatalf("stale save over %q: %v", parent, err)
				}
			case op < 9:
				keep := rapid.IntRange(1, 4).Draw(rt, "keep")
				if _, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: keep}); err != nil {
					rt.Fatal(err)
				}
				for name, ch := range chains {
					if len(ch) > keep {
						chains[name] = ch[len(ch)-keep:]
					}
				}
			default:
				if err := s.Delete(ctx, session); err != nil {
					rt.Fatal(err)
				}
				delete(chains, session)
			}
			for _, name := range sessions {
				checkModel(rt, s, name, chains[name])
			}
		}
		for _, name := range sessions {
			s.Delete(ctx, name)
		}
	})
}

func checkModel(rt *rapid.T, s checkpoint.Store, session string, chain []string) {
	ctx := context.Background()
	latest, err := s.Latest(ctx, session)
	if len(chain) == 0 {
		if !errors.Is(err, checkpoint.ErrNotFound) {
			rt.Fatalf("%s: latest of a session that should not exist: %v", session, err)
		}
		return
	}
	if err != nil || latest.ID != chain[len(chain)-1] {
		rt.Fatalf("%s: latest %v %v, model %s", session, latest, err, chain[len(chain)-1])
	}
	h, err := s.History(ctx, session)
	if err != nil || len(h) != len(chain) {
		rt.Fatalf("%s: history of %d (%v), model %d", session, len(h), err, len(chain))
	}
	for i, m := range h {
		if m.ID != chain[len(chain)-1-i] {
			rt.Fatalf("%s: history[%d] = %s, model %s", session, i, m.ID, chain[len(chain)-1-i])
		}
	}
}
