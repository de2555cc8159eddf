package serve_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	ckredis "github.com/compactkit/compact/checkpoint/redis"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// relay forwards TCP connections to a server until it is frozen; then it
// forwards nothing and answers nothing, as a stopped (SIGSTOP) server does.
type relay struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen bool
}

func startRelay(t *testing.T, to string) *relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(t, c, to)
		}
	}()
	return r
}

func (r *relay) serve(t *testing.T, c net.Conn, to string) {
	defer c.Close()
	s, err := net.Dial("tcp", to)
	if err != nil {
		return
	}
	defer s.Close()
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			for r.isFrozen() {
				time.Sleep(10 * time.Millisecond)
			}
			if n > 0 {
				dst.Write(buf[:n])
			}
			if err != nil {
				dst.Close()
				return
			}
		}
	}
	go pipe(s, c)
	pipe(c, s)
}

func (r *relay) freeze(on bool) {
	r.mu.Lock()
	r.frozen = on
	r.mu.Unlock()
}

func (r *relay) isFrozen() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frozen
}

// TestStoreDownCostsOneTimeout (QA-10): with the Redis store stalled (no
// answer) or gone (connection refused), a new over-threshold conversation
// waits for the store at most one store timeout, once; later ones skip the
// store (counted) until it is back, the failure is logged once, and every
// request is served.
func TestStoreDownCostsOneTimeout(t *testing.T) {
	srv := storetest.StartRedis(t)
	for _, how := range []string{"stalled", "refused"} {
		t.Run(how, func(t *testing.T) {
			addr := srv.Addr()
			var rl *relay
			if how == "stalled" {
				rl = startRelay(t, addr)
				addr = rl.ln.Addr().String()
			}
			store, err := ckredis.Open(context.Background(), "redis://"+addr+"/0", checkpoint.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if rl != nil {
					rl.freeze(false)
				}
				store.Close()
			})
			const timeout = 300 * time.Millisecond
			r := newRig(t, func(c *serve.Config) { c.Store, c.StoreTimeout = store, timeout })
			api := servetest.Chat
			body := request(api, modelFor(api), conversation(70, 8)[:120], false)
			post := func(session string) time.Duration {
				t0 := time.Now()
				if status, answer := r.post(t, apiPaths[api], body, map[string]string{serve.SessionHeader: session}); status != http.StatusOK {
					t.Fatalf("session %s: %d %s", session, status, answer)
				}
				return time.Since(t0)
			}
			post(how + "-up") // the store answers
			if rl != nil {
				rl.freeze(true)
			} else {
				srv.Stop()
				t.Cleanup(srv.Start)
			}
			first := post(how + "-1")
			for k := 2; k <= 4; k++ {
				post(fmt.Sprintf("%s-%d", how, k))
			}
			// The load fails at the timeout, and the save is skipped.
			if first > timeout+time.Second {
				t.Errorf("the first request after the store went down took %s; the store timeout is %s", first, timeout)
			}
			logs := r.waitLogsN(t, `"msg":"request"`, 5)
			if n := strings.Count(logs, `"msg":"store unavailable`); n != 1 {
				t.Errorf("the outage is logged %d times, want once:\n%s", n, logs)
			}
			m := r.waitMetrics(t, "compact_serve_store_skipped_total 7")
			if !strings.Contains(m, "compact_serve_store_skipped_total 7") {
				t.Errorf("the first save and 3 later conversations (load and save) should skip the store:\n%s", grepLines(m, "store_"))
			}
		})
	}
}
