package tokens

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image/png"
	"math"
	"sync"
	"testing"

	"github.com/compactkit/compact"
	"pgregory.net/rapid"
)

func mustCounter(t interface {
	Helper()
	Fatal(...any)
}, model string, opts ...Option) *Counter {
	t.Helper()
	c, err := ForModel(model, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pngData returns a base64 PNG of w×h: its signature and header chunk,
// which is all the pricing reads.
func pngData(t testing.TB, w, h int) string {
	t.Helper()
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[8:], uint32(h))
	ihdr[12] = 8 // bit depth; colour type, compression, filter, interlace 0
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	cfg, err := png.DecodeConfig(bytes.NewReader(b.Bytes()))
	if err != nil || cfg.Width != w || cfg.Height != h {
		t.Fatalf("png header: %v %+v", err, cfg)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestMessageParts(t *testing.T) {
	c := mustCounter(t, "gpt-4o", WithCache(nil))
	enc := c.Encoding()
	role := enc.Count("assistant")
	args := json.RawMessage(`{"path": "main.go", "line": 42}`)
	cases := []struct {
		name string
		msg  compact.Message
		opts []Option
		want int
	}{
		{"text", textMsg(compact.RoleUser, "", "hello there"), nil, 3 + 1 + enc.Count("hello there")},
		{"name", textMsg(compact.RoleUser, "bob", "hi"), nil, 3 + 1 + enc.Count("bob") + 1 + enc.Count("hi")},
		{"thinking left out", compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{
			{Type: compact.PartThinking, Text: "let me think about this"}, {Type: compact.PartText, Text: "ok"}}}, nil,
			3 + role + enc.Count("ok")},
		{"thinking counted", compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{
			{Type: compact.PartThinking, Text: "let me think about this"}, {Type: compact.PartText, Text: "ok"}}}, []Option{WithThinking()},
			3 + role + enc.Count("let me think about this") + enc.Count("ok")},
		{"tool calls", compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "a", Name: "read_file", Arguments: args}},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "b", Name: "ls"}}}}, nil,
			3 + role + 3 + enc.Count("read_file") + enc.Count(string(args)) + 3 + enc.Count("ls")},
		{"tool message", compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{"a"}, Parts: []compact.Part{
			{Type: compact.PartText, Text: "package main"}}}, nil,
			3 + enc.Count("tool") + enc.Count("package main")},
		{"two results and text", compact.Message{Role: compact.RoleUser, Parts: []compact.Part{
			{Type: compact.PartToolResult, CallID: "a", Text: "one"},
			{Type: compact.PartToolResult, CallID: "b", Text: "two"},
			{Type: compact.PartText, Text: "go on"}}}, nil,
			3 + 1 + enc.Count("one") + enc.Count("two") + enc.Count("go on") + 2*(3+enc.Count("tool"))},
		{"image", compact.Message{Role: compact.RoleUser, Parts: []compact.Part{
			{Type: compact.PartImage, Image: &compact.Image{MediaType: "image/png", Data: pngData(t, 1024, 1024)}}}}, nil,
			3 + 1 + 765},
	}
	for _, tc := range cases {
		c := mustCounter(t, "gpt-4o", append([]Option{WithCache(NewCache(16))}, tc.opts...)...)
		for range 2 {
			if got := c.Message(tc.msg); got != tc.want {
				t.Errorf("%s: %d tokens, want %d", tc.name, got, tc.want)
			}
		}
	}
}

func TestImagePrices(t *testing.T) {
	cases := []struct {
		provider string
		w, h     int
		want     int
	}{
		{"openai", 1024, 1024, 765},
		{"openai", 2048, 4096, 1105}, // 1024×2048, then 768×1536: 2×3 tiles
		{"openai", 512, 512, 255},
		{"openai", 100, 100, 255},
		{"anthropic", 1000, 1000, 1334},
		{"anthropic", 4000, 2000, 1533}, // fit 1568 long edge: 1568×784
		{"google", 300, 300, 258},
		{"google", 1000, 1000, 1032},
	}
	for _, tc := range cases {
		img := &compact.Image{MediaType: "image/png", Data: pngData(t, tc.w, tc.h)}
		if got := imageTokens(img, tc.provider); got != tc.want {
			t.Errorf("%s %d×%d: %d tokens, want %d", tc.provider, tc.w, tc.h, got, tc.want)
		}
		url := &compact.Image{URL: "data:image/png;base64," + img.Data}
		if got := imageTokens(url, tc.provider); got != tc.want {
			t.Errorf("%s %d×%d as data URL: %d tokens, want %d", tc.provider, tc.w, tc.h, got, tc.want)
		}
	}
	for provider, want := range map[string]int{"openai": 765, "anthropic": 1398, "google": 258} {
		for _, img := range []*compact.Image{{URL: "https://example.com/cat.png"}, {Data: "bm90IGFuIGltYWdl"}} {
			if got := imageTokens(img, provider); got != want {
				t.Errorf("%s, unreadable image %+v: %d, want %d", provider, img, got, want)
			}
		}
	}
}

// genMessage draws messages with every kind of part.
func genMessage(t *rapid.T) compact.Message {
	m := compact.Message{
		Role: rapid.SampledFrom([]compact.Role{compact.RoleSystem, compact.RoleUser, compact.RoleAssistant, compact.RoleTool}).Draw(t, "role"),
		Name: rapid.SampledFrom([]string{"", "bob", "tool_x"}).Draw(t, "name"),
	}
	for i := rapid.IntRange(0, 4).Draw(t, "parts"); i > 0; i-- {
		text := rapid.StringN(0, 60, -1).Draw(t, "text")
		switch rapid.IntRange(0, 4).Draw(t, "kind") {
		case 0:
			m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: text})
		case 1:
			m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: text})
		case 2:
			args, _ := json.Marshal(map[string]string{"q": text})
			m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "search", Arguments: args}})
		case 3:
			m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: "c", Text: text})
		case 4:
			m.Parts = append(m.Parts, compact.Part{Type: compact.PartImage, Image: &compact.Image{URL: "https://x/" + text}})
		}
	}
	return m
}

// TestCacheIsInvisible: a cached count is always the uncached count, and the
// cache never holds more than its capacity.
func TestCacheIsInvisible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		model := rapid.SampledFrom([]string{"gpt-4o", "gpt-4", "claude-sonnet-4-5"}).Draw(t, "model")
		thinking := rapid.Bool().Draw(t, "thinking")
		opts := []Option{}
		if thinking {
			opts = append(opts, WithThinking())
		}
		cache := NewCache(rapid.IntRange(2, 8).Draw(t, "capacity"))
		cached := mustCounter(t, model, append(opts, WithCache(cache))...)
		plain := mustCounter(t, model, append(opts, WithCache(nil))...)
		msgs := rapid.SliceOfN(rapid.Custom(genMessage), 1, 12).Draw(t, "messages")
		for range 2 {
			for _, m := range msgs {
				if a, b := cached.Message(m), plain.Message(m); a != b {
					t.Fatalf("cached count %d, uncached %d for %+v", a, b, m)
				}
			}
			if cache.Len() > cache.capacity {
				t.Fatalf("cache holds %d, capacity %d", cache.Len(), cache.capacity)
			}
		}
	})
}

// TestCacheSchemesDoNotMix: one cache shared by counters of different
// encodings and options keeps their counts apart.
func TestCacheSchemesDoNotMix(t *testing.T) {
	cache := NewCache(1024)
	m := compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{
		{Type: compact.PartThinking, Text: "hmm, 日本語 and some more words"},
		{Type: compact.PartText, Text: "お誕生日おめでとう — résumé naïve"}}}
	seen := map[string]int{}
	for _, model := range []string{"gpt-4o", "gpt-4", "claude-sonnet-4-5"} {
		for _, thinking := range []bool{false, true} {
			opts := []Option{WithCache(cache)}
			if thinking {
				opts = append(opts, WithThinking())
			}
			shared := mustCounter(t, model, opts...).Message(m)
			alone := mustCounter(t, model, append(opts[1:], WithCache(nil))...).Message(m)
			if shared != alone {
				t.Errorf("%s thinking=%v: %d with a shared cache, %d without", model, thinking, shared, alone)
			}
			seen[fmt.Sprint(model, thinking)] = shared
		}
	}
	if seen["gpt-4o false"] == seen["gpt-4 false"] && seen["gpt-4o true"] == seen["gpt-4 true"] {
		t.Logf("counts happen to agree across encodings: %v", seen)
	}
	if hits, _ := cache.Stats(); hits != 0 {
		t.Errorf("%d cache hits across schemes", hits)
	}
}

func TestCacheHitsOnRecount(t *testing.T) {
	cache := NewCache(1024)
	c := mustCounter(t, "gpt-4o", WithCache(cache))
	var tr compact.Transcript
	for i := range 50 {
		tr.Messages = append(tr.Messages, textMsg(compact.RoleUser, "", fmt.Sprintf("message number %d", i)))
	}
	first := c.Transcript(tr)
	_, misses := cache.Stats()
	tr.Messages = append(tr.Messages, textMsg(compact.RoleAssistant, "", "one more"))
	second := c.Transcript(tr)
	hits, misses2 := cache.Stats()
	if misses2-misses != 1 || hits != 50 {
		t.Errorf("re-count after one new message: %d new misses, %d hits; want 1 and 50", misses2-misses, hits)
	}
	if want := first + c.Message(tr.Messages[50]); second != want {
		t.Errorf("grown transcript: %d, want %d", second, want)
	}
}

func TestCountingConcurrently(t *testing.T) {
	files := loadSmallCorpus(t)
	var texts []string
	for _, f := range files {
		texts = append(texts, spread(f.strings, 40)...)
	}
	for _, model := range []string{"gpt-4o", "gpt-4", "claude-sonnet-4-5"} {
		c := mustCounter(t, model, WithCache(NewCache(64)))
		want := make([]int, len(texts))
		for i, s := range texts {
			want[i] = c.Text(s)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < len(texts); i += 2 {
					if got := c.Text(texts[i]); got != want[i] {
						t.Errorf("%s: concurrent count %d, serial %d", model, got, want[i])
					}
					if got, want := c.Message(textMsg(compact.RoleUser, "", texts[i])), c.Message(textMsg(compact.RoleUser, "", texts[i])); got != want {
						t.Errorf("%s: message counts differ: %d, %d", model, got, want)
					}
				}
			}()
		}
		wg.Wait()
	}
}

// TestCalibrateConverges: when a provider's counts are a fixed ratio of the
// estimate, calibrated estimates converge to them; absurd reports move the
// factor no further than its bounds.
func TestCalibrateConverges(t *testing.T) {
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		model := fmt.Sprintf("calibration-test-model-%d", n)
		ratio := rapid.Float64Range(0.5, 2).Draw(t, "ratio")
		c := mustCounter(t, model, WithCache(nil))
		texts := []string{"The quick brown fox jumps over the lazy dog. ", "func main() { fmt.Println(42) }\n", "日本語のテキストです。", `{"a": [1, 2, 3], "b": "c"}`}
		for round := range 20 {
			s := texts[round%len(texts)]
			for range 1 + round%5 {
				s += s
			}
			est := c.Text(s)
			reported := int(math.Round(float64(Estimate(s)) * ratio))
			c.Calibrate(reported, est)
		}
		if f := CalibrationFactor(model); math.Abs(f/ratio-1) > 0.02 {
			t.Fatalf("factor %.4f after 20 reports of ratio %.4f", f, ratio)
		}
		long := texts[0] + texts[1] + texts[3]
		for range 6 {
			long += long
		}
		if got, want := float64(c.Text(long)), float64(Estimate(long))*ratio; math.Abs(got/want-1) > 0.02 {
			t.Fatalf("calibrated estimate %.0f, provider would say %.0f", got, want)
		}
		Calibrate(model, 1_000_000_000, 10)
		if f := CalibrationFactor(model); f > maxFactor {
			t.Fatalf("factor %.2f beyond its bound after an absurd report", f)
		}
		ResetCalibration(model)
		if f := CalibrationFactor(model); f != 1 {
			t.Fatalf("factor %.2f after reset", f)
		}
	})
}

func TestCalibrateLeavesExactModelsAlone(t *testing.T) {
	Calibrate("gpt-4o", 1000, 500)
	if f := CalibrationFactor("gpt-4o"); f != 1 {
		t.Fatalf("gpt-4o factor %.2f after Calibrate", f)
	}
	c := mustCounter(t, "gpt-4o")
	c.Calibrate(1000, 500)
	if got, want := c.Text("hello world"), 2; got != want {
		t.Fatalf("gpt-4o count %d after Calibrate, want %d", got, want)
	}
	Calibrate("claude-haiku-4-5", 0, 100) // ignored: no real figure
	if f := CalibrationFactor("claude-haiku-4-5"); f != 1 {
		t.Fatalf("factor %.2f after a zero report", f)
	}
}

// TestMessagesCountsInOrder: Messages (on all cores) gives each message
// the count Message gives it, in order, with and without the cache.
func TestMessagesCountsInOrder(t *testing.T) {
	var msgs []compact.Message
	for _, f := range loadSmallCorpus(t) {
		for _, s := range spread(f.strings, 300) {
			msgs = append(msgs, textMsg(compact.RoleUser, "", s))
		}
	}
	if len(msgs) < 1000 {
		t.Fatalf("only %d messages: too few to run on several goroutines", len(msgs))
	}
	for _, cache := range []*Cache{nil, NewCache(256)} {
		c := mustCounter(t, "gpt-4o", WithCache(cache))
		got := c.Messages(msgs)
		for i, m := range msgs {
			if want := c.Message(m); got[i] != want {
				t.Fatalf("message %d: Messages says %d, Message %d", i, got[i], want)
			}
		}
	}
}
