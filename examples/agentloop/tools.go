package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/redact"
)

// toolResult is what a tool call returns to the model, and what the
// idempotency cache keeps for it.
type toolResult struct {
	Output  string `json:"output"`
	IsError bool   `json:"is_error,omitempty"`
	// Receipt is a service's answer to a side-effecting call.
	Receipt json.RawMessage `json:"receipt,omitempty"`
}

// toolError is a failure in the tool's own terms (a missing file, a bad
// argument): the model is told, and can try something else. It is not
// cached, so the call runs again if the model repeats it. Any other error
// (a service that cannot be reached) stops the loop; the next run resumes
// and tries again under the same idempotency key.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func toolErrorf(format string, a ...any) error { return &toolError{fmt.Sprintf(format, a...)} }

// tool is one tool the model may call.
type tool struct {
	def compact.ToolDef
	// effect marks a tool that changes the world outside the work dir.
	// Its idempotency key depends on its arguments only, never on files
	// that may change between a crash and the resume.
	effect bool
	// inputs lists the files (relative to the work dir) a call reads.
	// Their content goes into the call's idempotency key, so a call whose
	// inputs changed (run_tests after a fix) runs again instead of being
	// answered with the old result.
	inputs func(args json.RawMessage) []string
	run    func(ctx context.Context, args json.RawMessage, key string) (toolResult, error)
}

// toolbox holds the tools and what they work with.
type toolbox struct {
	dir      string // the work dir
	session  string
	services string // base URL of the deploy and mail services
	http     *http.Client
	redactor *redact.Redactor
	tools    []*tool
}

func newToolbox(dir, session, services string, redactor *redact.Redactor) *toolbox {
	tb := &toolbox{dir: dir, session: session, services: services, http: &http.Client{}, redactor: redactor}
	tb.tools = []*tool{
		{
			def:    toolDef("read_file", "Read a file of the work dir.", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			inputs: func(args json.RawMessage) []string { return []string{argString(args, "path")} },
			run:    tb.readFile,
		},
		{
			def: toolDef("write_file", "Write a file of the work dir, replacing its content.",
				`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
			run: tb.writeFile,
		},
		{
			def: toolDef("run_tests", "Run the package's tests (go test -v ./...), or with env its smoke tests against a deployed environment.",
				`{"type":"object","properties":{"env":{"type":"string","enum":["staging","production"]}}}`),
			inputs: func(json.RawMessage) []string { return []string{sourceFile, testFile} },
			run:    tb.runTests,
		},
		{
			def: toolDef("deploy", "Deploy a version of a service to an environment. Cannot be undone.",
				`{"type":"object","properties":{"service":{"type":"string"},"env":{"type":"string","enum":["staging","production"]},"version":{"type":"string"}},"required":["service","env","version"]}`),
			effect: true,
			run:    tb.service("deploy"),
		},
		{
			def: toolDef("send_email", "Send an email. Cannot be undone.",
				`{"type":"object","properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject","body"]}`),
			effect: true,
			run:    tb.service("email"),
		},
	}
	return tb
}

func toolDef(name, desc, params string) compact.ToolDef {
	return compact.ToolDef{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

// defs returns the definitions offered to the model.
func (tb *toolbox) defs() []compact.ToolDef {
	defs := make([]compact.ToolDef, len(tb.tools))
	for i, t := range tb.tools {
		defs[i] = t.def
	}
	return defs
}

func (tb *toolbox) lookup(name string) *tool {
	for _, t := range tb.tools {
		if t.def.Name == name {
			return t
		}
	}
	return nil
}

// key returns the idempotency key of a call: checkpoint.Key of the tool's
// name, its arguments (canonical JSON, so {"a":1,"b":2} and {"b":2,"a":1}
// are one call) and the content of the files it reads.
func (tb *toolbox) key(call compact.ToolCall) (string, error) {
	t := tb.lookup(call.Name)
	if t == nil {
		return "", toolErrorf("there is no tool %q", call.Name)
	}
	var files []string
	if t.inputs != nil {
		for _, name := range t.inputs(call.Arguments) {
			path, err := tb.path(name)
			if err != nil {
				return "", err
			}
			if _, err := os.Stat(path); err != nil {
				return "", toolErrorf("%s: %s does not exist", call.Name, name)
			}
			files = append(files, path)
		}
	}
	key, err := checkpoint.Key(call.Name, call.Arguments, files...)
	if err != nil {
		return "", toolErrorf("%s: %v", call.Name, err) // arguments that are not JSON
	}
	return key, nil
}

// run runs a call and masks any secret in its output, before the output can
// reach the model, the summarizer, the idempotency cache or a checkpoint.
func (tb *toolbox) run(ctx context.Context, call compact.ToolCall, key string) (toolResult, error) {
	t := tb.lookup(call.Name)
	if t == nil {
		return toolResult{}, toolErrorf("there is no tool %q", call.Name)
	}
	r, err := t.run(ctx, call.Arguments, key)
	if err != nil {
		return toolResult{}, err
	}
	r.Output = tb.redactor.String(r.Output)
	return r, nil
}

// path resolves a path the model gave, refusing anything outside the work
// dir and the services' own record.
func (tb *toolbox) path(name string) (string, error) {
	if !filepath.IsLocal(name) {
		return "", toolErrorf("%q is not a path inside the work dir", name)
	}
	if filepath.Clean(name) == receiptsFile {
		return "", toolErrorf("%s belongs to the deploy and mail services", name)
	}
	return filepath.Join(tb.dir, name), nil
}

func (tb *toolbox) readFile(_ context.Context, args json.RawMessage, _ string) (toolResult, error) {
	path, err := tb.path(argString(args, "path"))
	if err != nil {
		return toolResult{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return toolResult{}, toolErrorf("read_file: %v", err)
	}
	return toolResult{Output: string(b)}, nil
}

func (tb *toolbox) writeFile(_ context.Context, args json.RawMessage, _ string) (toolResult, error) {
	var a struct{ Path, Content string }
	if err := json.Unmarshal(args, &a); err != nil {
		return toolResult{}, toolErrorf("write_file: %v", err)
	}
	path, err := tb.path(a.Path)
	if err != nil {
		return toolResult{}, err
	}
	if err := writeFileAtomic(path, []byte(a.Content)); err != nil {
		return toolResult{}, toolErrorf("write_file: %v", err)
	}
	return toolResult{Output: fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path)}, nil
}

func (tb *toolbox) runTests(_ context.Context, args json.RawMessage, _ string) (toolResult, error) {
	src, err := os.ReadFile(filepath.Join(tb.dir, sourceFile))
	if err != nil {
		return toolResult{}, toolErrorf("run_tests: %v", err)
	}
	log, passed := simulateTests(string(src))
	if env := argString(args, "env"); env != "" {
		log = "smoke tests against " + env + "\n" + log
	}
	return toolResult{Output: log, IsError: !passed}, nil
}

// service returns the tool that calls a service endpoint. The call's
// idempotency key travels with the request, scoped to the session, so the
// service can recognise a request it has already acted on.
func (tb *toolbox) service(endpoint string) func(context.Context, json.RawMessage, string) (toolResult, error) {
	return func(ctx context.Context, args json.RawMessage, key string) (toolResult, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, tb.services+"/services/"+endpoint, bytes.NewReader(args))
		if err != nil {
			return toolResult{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", tb.session+"/"+key)
		resp, err := tb.http.Do(req)
		if err != nil {
			return toolResult{}, fmt.Errorf("%s service: %w", endpoint, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return toolResult{}, fmt.Errorf("%s service: %w", endpoint, err)
		}
		switch {
		case resp.StatusCode >= 500:
			return toolResult{}, fmt.Errorf("%s service: %s: %s", endpoint, resp.Status, bytes.TrimSpace(body))
		case resp.StatusCode != http.StatusOK:
			return toolResult{}, toolErrorf("%s: %s", endpoint, bytes.TrimSpace(body))
		}
		var rec serviceReceipt
		if err := json.Unmarshal(body, &rec); err != nil {
			return toolResult{}, fmt.Errorf("%s service: bad answer: %w", endpoint, err)
		}
		// A replayed answer is the same as the first: the result (and so the
		// transcript) does not depend on whether the call was repeated.
		return toolResult{Output: rec.Action + ": receipt " + rec.Receipt, Receipt: body}, nil
	}
}

// argString returns a string argument, "" when it is missing.
func argString(args json.RawMessage, name string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[name], &s) != nil {
		return ""
	}
	return s
}

// isToolError reports whether err is a failure to tell the model about.
func isToolError(err error) bool {
	var te *toolError
	return errors.As(err, &te)
}

// shorten cuts s to n bytes for printing.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never cut a character in two
	}
	return s[:n] + "…"
}
