package serve_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// BenchmarkColdRequest100KB is BenchmarkUnderThreshold100KB's serve-cold
// case for each of the three APIs: a 100 KB request of a conversation the
// proxy has never seen, which it reads (format) and counts in full, against
// the ReverseProxy anchor. cpu-ms/op minus the anchor's is the proxy's
// added CPU per request (issue 15: at most 1 ms).
func BenchmarkColdRequest100KB(b *testing.B) {
	up := benchUpstream(b)
	for _, api := range allAPIs {
		cold := make([][]byte, 256)
		for i := range cold {
			cold[i] = coldBody(api, 100<<10, fmt.Sprintf("c%d-%d", i, time.Now().UnixNano()))
		}
		header := http.Header{"Content-Type": {"application/json"}}
		if api == servetest.Messages {
			header.Set("anthropic-version", "2023-06-01")
		}
		for _, p := range []struct {
			name string
			srv  func() string
		}{
			{"anchor", func() string { return anchorProxy(b, up.URL).URL }},
			{"serve-cold", func() string { return serveProxy(b, up.URL, serve.Config{}).URL }},
		} {
			b.Run(string(api)+"/"+p.name, func(b *testing.B) {
				url := p.srv() + apiPaths[api]
				client := &http.Client{}
				b.SetBytes(int64(len(cold[0])))
				b.ResetTimer()
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					req, _ := http.NewRequest("POST", url, bytes.NewReader(cold[i%len(cold)]))
					req.Header = header.Clone()
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// coldBody is a request of api of about size bytes whose every turn holds
// tag, so that the proxy has seen none of its elements.
func coldBody(api servetest.API, size int, tag string) []byte {
	turns := conversation(size/1500+10, 12)
	for i := range turns {
		turns[i].text = tag + " " + turns[i].text
	}
	for len(turns) > 2 && len(request(api, modelFor(api), turns, false)) > size {
		turns = turns[:len(turns)-2] // a call and its result
	}
	return request(api, modelFor(api), turns, false)
}
