// Command upstream is a scripted LLM API on a loopback port, for driving
// real agent CLIs through compact serve (scripts/serve-agents.sh). It speaks
// OpenAI Chat Completions, OpenAI Responses and Anthropic Messages (JSON and
// server-sent events), makes the agent run a shell command a given number
// of times so that its session grows, then answers with a final text. Every
// request it receives is written to --dir.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/serve/servetest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	dir := flag.String("dir", "", "directory to write each request to")
	rounds := flag.Int("tool-rounds", 8, "tool calls the scripted model makes before it answers")
	command := flag.String("command", "seq 1 4000", "shell command each tool call runs")
	answer := flag.String("answer", "All done.", "the final answer")
	addrFile := flag.String("addr-file", "", "write the listening address to this file")
	flag.Parse()

	var n atomic.Int64
	up := &servetest.Upstream{ChunkSize: 6}
	up.Script = func(api servetest.API, body []byte) servetest.Reply {
		return script(api, body, *rounds, *command, *answer)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		k := n.Add(1)
		if *dir != "" {
			os.WriteFile(filepath.Join(*dir, fmt.Sprintf("%04d-%s.json", k, sanitize(r.URL.Path))), b.Bytes(), 0o644)
		}
		log.Printf("request %d: %s %s, %d bytes", k, r.Method, r.URL.Path, b.Len())
		r.Body = readCloser{bytes.NewReader(b.Bytes())}
		up.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644)
	}
	log.Printf("listening on %s", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func sanitize(p string) string {
	out := []byte(p)
	for i, c := range out {
		if c == '/' {
			out[i] = '_'
		}
	}
	return string(out)
}

var formats = map[servetest.API]format.Name{
	servetest.Chat: format.OpenAIChat, servetest.Responses: format.OpenAIResponses, servetest.Messages: format.Anthropic,
}

// script answers a request: the next shell tool call while fewer than
// rounds were made and the request offers a shell tool, else the answer.
// The calls made so far are read from the ids of the calls the request
// holds (call_step_N): a compacted request has dropped the older ones, but
// keeps the latest with its result.
func script(api servetest.API, body []byte, rounds int, command, answer string) servetest.Reply {
	t, err := format.Read(bytes.NewReader(body), "request", formats[api])
	if err != nil {
		return servetest.Reply{Text: answer}
	}
	step := 0
	for _, m := range t.Messages {
		for _, c := range m.ToolCalls() {
			var n int
			if _, err := fmt.Sscanf(c.ID, "call_step_%d", &n); err == nil && n > step {
				step = n
			}
		}
	}
	tool, args := shellTool(body, command)
	if step >= rounds || tool == "" {
		return servetest.Reply{Text: answer}
	}
	return servetest.Reply{Text: fmt.Sprintf("Running step %d.", step+1),
		ToolCalls: []servetest.ToolCall{{ID: fmt.Sprintf("call_step_%d", step+1), Name: tool, Arguments: args}}}
}

// shellTool finds a tool that runs shell commands among the request's
// tools and returns its name and the arguments that run command.
func shellTool(body []byte, command string) (string, string) {
	var req struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	argv, _ := json.Marshal([]string{"bash", "-lc", command})
	cmd, _ := json.Marshal(command)
	known := map[string]string{
		"Bash":          fmt.Sprintf(`{"command":%s,"description":"Print numbers"}`, cmd),
		"shell":         fmt.Sprintf(`{"command":%s}`, argv),
		"exec_command":  fmt.Sprintf(`{"cmd":%s}`, cmd),
		"shell_command": fmt.Sprintf(`{"command":%s}`, cmd),
	}
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Function.Name
		}
		if args, ok := known[name]; ok {
			return name, args
		}
	}
	return "", ""
}
