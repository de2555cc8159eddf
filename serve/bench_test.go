package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/cputime"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// Benchmarks of the proxy against a plain httputil.ReverseProxy (the
// anchor) in the same run, both in front of the same upstream:
//
//	go test ./serve -run '^$' -bench . -benchmem -cpu 1
//
// Latencies are reported as percentiles of the run's requests (p50-ms,
// p99-ms); the added latency is serve's p99 minus the anchor's.

// benchUpstream answers every request at once: a small JSON answer, or for
// a streamed request a few events, the first flushed immediately.
func benchUpstream(b *testing.B) *httptest.Server {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", i)
			rc.Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	b.Cleanup(srv.Close)
	return srv
}

func anchorProxy(b *testing.B, upstream string) *httptest.Server {
	b.Helper()
	u, _ := url.Parse(upstream)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: t}
	srv := httptest.NewServer(rp)
	b.Cleanup(srv.Close)
	return srv
}

func serveProxy(b *testing.B, upstream string, cfg serve.Config) *httptest.Server {
	b.Helper()
	cfg.OpenAIUpstream, cfg.AnthropicUpstream = upstream, upstream
	if cfg.Compaction.Model == "" && cfg.Compaction.Threshold == 0 {
		cfg.Compaction = compactor.DefaultConfig()
	}
	s, err := serve.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(s)
	b.Cleanup(srv.Close)
	return srv
}

// benchProxy is one proxy of a benchmark and the bodies sent through it.
type benchProxy struct {
	name   string
	srv    func() *httptest.Server
	bodies [][]byte
}

// anchorWarmCold are the anchor and serve, sent bodies (requests of
// conversations that grow, which serve bounds from what it counted
// before), and serve sent cold (conversations it has never seen).
func anchorWarmCold(b *testing.B, upstream string, bodies, cold [][]byte) []benchProxy {
	return []benchProxy{
		{"anchor", func() *httptest.Server { return anchorProxy(b, upstream) }, bodies},
		{"serve", func() *httptest.Server { return serveProxy(b, upstream, serve.Config{}) }, bodies},
		{"serve-cold", func() *httptest.Server { return serveProxy(b, upstream, serve.Config{}) }, cold},
	}
}

// chatBody returns a Chat Completions request of about size bytes: a
// coding session of tool calls and results, ending with a user message
// that tag makes unique (a growing conversation's new turn). With cold, tag
// is in every message, so that no element was seen before.
func chatBody(model string, size int, tag string, stream, cold bool) []byte {
	msgs := []any{map[string]any{"role": "system", "content": systemPrompt}}
	total := 0
	turns := conversation(size/1500+10, 12)
	for _, tn := range turns[1:] {
		if total >= size {
			break
		}
		if cold {
			tn.text = tag + " " + tn.text
		}
		m := chatMessage(tn)
		raw, _ := json.Marshal(m)
		total += len(raw)
		msgs = append(msgs, m)
	}
	if _, ok := msgs[len(msgs)-1].(map[string]any)["tool_calls"]; ok {
		msgs = msgs[:len(msgs)-1] // end on a result, not a pending call
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": "Next step " + tag})
	body, _ := json.Marshal(map[string]any{"model": model, "messages": msgs, "stream": stream, "temperature": 0.2})
	return body
}

type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(q float64) float64 {
		return float64(l[min(len(l)-1, int(q*float64(len(l))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// apiBody returns a request of api of about size bytes: a coding session
// of tool calls and results, ending with a user message that tag makes
// unique (a growing conversation's new turn). With cold, tag is in every
// message, so that no element was seen before.
func apiBody(api servetest.API, size int, tag string, cold bool) []byte {
	model := benchModel(api)
	all := conversation(size/1500+10, 12)
	// The fewest turns that make size, ending on a tool result.
	n := sort.Search(len(all), func(n int) bool { return len(request(api, model, all[:n], false)) >= size })
	for n < len(all) && all[n-1].role != compact.RoleTool {
		n++
	}
	turns := append(slices.Clone(all[:n]), turn{role: compact.RoleUser, text: "Next step " + tag})
	if cold {
		for i := range turns {
			turns[i].text = tag + " " + turns[i].text
		}
	}
	return request(api, model, turns, false)
}

// post sends one request and returns its latency.
func benchPost(b *testing.B, client *http.Client, url string, body []byte) time.Duration {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
	return time.Since(t0)
}

// A 100 KB request under the threshold, forwarded unchanged, for each API.
// Goal: p99 at most 1 ms above the anchor's. "serve" is a growing
// conversation, as agents send it: each request repeats the elements of
// the one before and adds a turn, which the proxy bounds unread.
// "serve-cold" sends a conversation it has never seen each time, which it
// reads and counts in full.
func BenchmarkUnderThreshold100KB(b *testing.B) {
	up := benchUpstream(b)
	for _, api := range allAPIs {
		bodies := make([][]byte, 64)
		for i := range bodies {
			bodies[i] = apiBody(api, 100<<10, strconv.Itoa(i), false)
		}
		cold := make([][]byte, 256)
		for i := range cold {
			cold[i] = apiBody(api, 100<<10, fmt.Sprintf("c%d-%d", i, time.Now().UnixNano()), true)
		}
		for _, p := range anchorWarmCold(b, up.URL, bodies, cold) {
			b.Run(string(api)+"/"+p.name, func(b *testing.B) {
				bodies := p.bodies
				srv := p.srv()
				client := srv.Client()
				lat := make(latencies, 0, b.N)
				b.SetBytes(int64(len(bodies[0])))
				b.ResetTimer()
				c0 := cputime.Process()
				for i := 0; i < b.N; i++ {
					lat = append(lat, benchPost(b, client, srv.URL+apiPaths[api], bodies[i%len(bodies)]))
				}
				b.StopTimer()
				lat.report(b)
				// CPU per request (client, proxy and upstream in this
				// process): the difference to the anchor's is the proxy's
				// added work, whatever else runs on the machine.
				b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// 100 KB requests under load: clients at once, each a growing
// conversation of its own (a round more per request), through the anchor
// and through the proxy. Reports p50 and p99 of all requests.
func BenchmarkUnderLoad100KB(b *testing.B) {
	up := benchUpstream(b)
	for _, clients := range []int{8, 32} {
		convs := clientConversations(servetest.Chat, clients, 32, false)
		for _, p := range []struct {
			name string
			srv  func() *httptest.Server
		}{
			{"anchor", func() *httptest.Server { return anchorProxy(b, up.URL) }},
			{"serve", func() *httptest.Server { return serveProxy(b, up.URL, serve.Config{}) }},
		} {
			b.Run(fmt.Sprintf("clients=%d/%s", clients, p.name), func(b *testing.B) {
				srv := p.srv()
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
				var mu sync.Mutex
				lat := make(latencies, 0, b.N)
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := 0; ; k++ {
							if next.Add(1) > int64(b.N) {
								return
							}
							d := benchPost(b, client, srv.URL+apiPaths[servetest.Chat], convs[c][k%len(convs[c])])
							mu.Lock()
							lat = append(lat, d)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				lat.report(b)
			})
		}
	}
}

// The same request streamed: time to the first byte of the answer, for a
// growing conversation and (serve-cold) for conversations never seen.
func BenchmarkFirstStreamedByte100KB(b *testing.B) {
	up := benchUpstream(b)
	bodies := make([][]byte, 64)
	for i := range bodies {
		bodies[i] = chatBody("gpt-4o", 100<<10, strconv.Itoa(i), true, false)
	}
	cold := make([][]byte, 256)
	for i := range cold {
		cold[i] = chatBody("gpt-4o", 100<<10, fmt.Sprintf("c%d-%d", i, time.Now().UnixNano()), true, true)
	}
	for _, p := range anchorWarmCold(b, up.URL, bodies, cold) {
		b.Run(p.name, func(b *testing.B) {
			bodies := p.bodies
			srv := p.srv()
			client := srv.Client()
			lat := make(latencies, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					b.Fatal(err)
				}
				var one [1]byte
				if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.StopTimer()
			lat.report(b)
		})
	}
}

// A 1M-token request (gpt-4.1, a 1M window, exact counts) compacted with
// the deterministic fallback and forwarded. Goal: under 300 ms on one
// core. Each run's conversation is new (its own text and session), so
// nothing is cached from the run before.
func BenchmarkCompact1MTokens(b *testing.B) {
	var mu sync.Mutex
	var forwarded []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		forwarded = body
		mu.Unlock()
		io.WriteString(w, `{"choices":[]}`)
	}))
	b.Cleanup(up.Close)
	for _, name := range []string{"anchor", "serve"} {
		b.Run(name, func(b *testing.B) {
			if name == "anchor" {
				benchForward1M(b, anchorProxy(b, up.URL), func() bool { return true })
				return
			}
			benchForward1M(b, serveProxy(b, up.URL, serve.Config{}), func() bool {
				mu.Lock()
				defer mu.Unlock()
				return bytes.Contains(forwarded, []byte("<<<compact:handoff>>>"))
			})
		})
	}
}

// benchForward1M sends 1M-token requests through srv; compacted says
// whether the last one arrived compacted.
func benchForward1M(b *testing.B, srv *httptest.Server, compacted func() bool) {
	client := srv.Client()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		body := bigChat(fmt.Sprintf("run%d", i), 1_000_000)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set(serve.SessionHeader, fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano()))
		runtime.GC()
		c0 := cputime.Process()
		b.StartTimer()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.StopTimer()
		cpu += cputime.Process() - c0
		if !compacted() {
			b.Fatal("the 1M-token request was not compacted")
		}
		b.SetBytes(int64(len(body)))
		b.StartTimer()
	}
	// CPU time is what "on one core" means on a machine shared with other
	// work, where wall time also holds the waits for a core.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// bigChat is a Chat Completions request for gpt-4.1 of about tokens
// tokens: a long session of file reads and command outputs, its text made
// unique by tag.
func bigChat(tag string, tokens int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4.1","messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"Fix the flaky test suite (` + tag + `)."}`)
	// About 3.2 bytes per token for this text; aim a little over.
	size := tokens * 33 / 10
	for k := 0; b.Len() < size; k++ {
		id := fmt.Sprintf("call_%s_%d", tag, k)
		fmt.Fprintf(&b, `,{"role":"assistant","content":"Checking module %d.","tool_calls":[{"id":%q,"type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"go test ./mod%d/...\"}"}}]}`, k, id, k)
		var out strings.Builder
		for l := 0; l < 60; l++ {
			fmt.Fprintf(&out, "=== RUN TestMod%d_%d_%s\n--- PASS: TestMod%d_%d (0.%02ds) mod%d/file_%d_test.go:%d ok value=%x\n", k, l, tag, k, l, l, k, l, l*7, k*l+l)
		}
		raw, _ := json.Marshal(out.String())
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":%q,"content":%s}`, id, raw)
	}
	b.WriteString(`,{"role":"user","content":"Now fix the remaining failure."}],"stream":false}`)
	return []byte(b.String())
}

// 200 streaming requests at once through the proxy, some compacted on the
// way: no errors, every stream whole. Reports the process's peak RSS (the
// proxy, the upstream and the clients share this process).
func BenchmarkConcurrentStreams200(b *testing.B) {
	up := &servetest.Upstream{ChunkSize: 16, ChunkDelay: 2 * time.Millisecond}
	up.Script = func(servetest.API, []byte) servetest.Reply {
		return servetest.Reply{Text: strings.Repeat("streamed text ", 20)}
	}
	upSrv := httptest.NewServer(up)
	b.Cleanup(upSrv.Close)
	srv := serveProxy(b, upSrv.URL, serve.Config{Models: testModels(b), Compaction: func() compactor.Config {
		c := compactor.DefaultConfig()
		return c
	}()})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}
	small := request(servetest.Chat, gptModel, conversation(5, 4), true)
	long := request(servetest.Chat, gptModel, conversation(60, 8), true)
	var errs, compacted int64
	var mu sync.Mutex
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for k := 0; k < 200; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				body := small
				if k%4 == 0 {
					body = long
				}
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set(serve.SessionHeader, fmt.Sprintf("s%d-%d", i, k))
				resp, err := client.Do(req)
				ok := err == nil && resp.StatusCode == 200
				events := 0
				if err == nil {
					sc := bufio.NewScanner(resp.Body)
					for sc.Scan() {
						if strings.HasPrefix(sc.Text(), "data: ") {
							events++
						}
					}
					ok = ok && sc.Err() == nil && events > 10
					resp.Body.Close()
				}
				mu.Lock()
				if !ok {
					errs++
				}
				if k%4 == 0 {
					compacted++
				}
				mu.Unlock()
			}(k)
		}
		wg.Wait()
	}
	b.StopTimer()
	if errs > 0 {
		b.Errorf("%d of %d streams failed", errs, 200*b.N)
	}
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
	_ = compacted
}

// peakRSSMB reads the process's peak resident set (VmHWM) on Linux; 0
// elsewhere.
func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// warmClients is how many clients send at once in BenchmarkWarmUnderLoad.
const warmClients = 32

// clientConversations returns, for each of clients, a conversation of api
// of its own, growing by a round (an assistant's call and its result) per
// request from about 100 KB: perClient requests. With ask, each request
// ends with an ask of its own after the round.
func clientConversations(api servetest.API, clients, perClient int, ask bool) [][][]byte {
	model := benchModel(api)
	out := make([][][]byte, clients)
	for c := range out {
		turns := conversation(100, 12)
		for i := range turns {
			turns[i].text = fmt.Sprintf("client %d: %s", c, turns[i].text)
		}
		n := 1
		for len(request(api, model, turns[:n], false)) < 100<<10 || turns[n-1].role != compact.RoleTool {
			n++
		}
		for ; len(out[c]) < perClient; n++ {
			if turns[n-1].role != compact.RoleTool {
				continue
			}
			req := turns[:n]
			if ask {
				req = append(slices.Clone(req), turn{role: compact.RoleUser, text: fmt.Sprintf("client %d: go on with step %d", c, n)})
			}
			out[c] = append(out[c], request(api, model, req, false))
		}
	}
	return out
}

// benchModel is the model the benchmarks ask for of each API.
func benchModel(api servetest.API) string {
	if api == servetest.Messages {
		return "claude-sonnet-4-5"
	}
	return "gpt-4o"
}

// The warm path under load: warmClients clients at once, each a
// conversation of its own that the proxy compacted on its first request
// (sent before the timer starts); every timed request repeats it with a
// round more, over the threshold as it comes, and goes out as the stored
// prefix and the new elements. "anchor" is a plain httputil.ReverseProxy
// in front of the same upstream, in the same run. Reports p50 and p99 of
// all requests, and CPU per request of the whole process (clients, proxy
// and upstream: the difference to the anchor's is the proxy's work).
//
//	go test ./serve -run '^$' -bench WarmUnderLoad -benchmem -cpu 1,2 -benchtime 480x
func BenchmarkWarmUnderLoad(b *testing.B) {
	up := benchUpstream(b)
	cfg := func() serve.Config {
		c := compactor.DefaultConfig()
		c.Window, c.OutputReserve = 32000, 2000
		return serve.Config{Compaction: c}
	}
	for _, api := range allAPIs {
		// Each first request (about 100 KB) is over the threshold of a
		// 32K-token window.
		convs := clientConversations(api, warmClients, 16, true)
		for _, p := range []struct {
			name string
			srv  func() *httptest.Server
		}{
			{"anchor", func() *httptest.Server { return anchorProxy(b, up.URL) }},
			{"serve", func() *httptest.Server { return serveProxy(b, up.URL, cfg()) }},
		} {
			b.Run(string(api)+"/"+p.name, func(b *testing.B) {
				srv := p.srv()
				url := srv.URL + apiPaths[api]
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * warmClients}}
				b.Cleanup(client.CloseIdleConnections)
				// Each conversation's first request: compacted by serve,
				// its prefix stored; the next ones are warm.
				var wg sync.WaitGroup
				for c := range convs {
					wg.Go(func() { benchPost(b, client, url, convs[c][0]) })
				}
				wg.Wait()
				var mu sync.Mutex
				lat := make(latencies, 0, b.N)
				var clientID atomic.Int64
				b.SetParallelism(max(1, warmClients/runtime.GOMAXPROCS(0)))
				b.ReportAllocs()
				runtime.GC()
				b.ResetTimer()
				c0 := cputime.Process()
				b.RunParallel(func(pb *testing.PB) {
					c := int(clientID.Add(1)-1) % len(convs)
					bodies := convs[c][1:]
					var mine latencies
					for k := 0; pb.Next(); k++ {
						mine = append(mine, benchPost(b, client, url, bodies[k%len(bodies)]))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
				b.StopTimer()
				lat.report(b)
				b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
