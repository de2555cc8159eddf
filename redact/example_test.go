package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

func ExampleRedactor_Redact() {
	r, err := redact.New(redact.Config{})
	if err != nil {
		panic(err)
	}
	out, found := r.Redact("export GITHUB_TOKEN=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\n" +
		"DATABASE_URL=postgres://app:Tr0ub4dor&3xyz@db:5432/app\n" +
		"MAX_TOKENS=4096\n")
	fmt.Print(out)
	for _, f := range found {
		fmt.Println(f.Rule, f.Start, f.End)
	}
	// Output:
	// export GITHUB_TOKEN=[REDACTED:github-token#1]
	// DATABASE_URL=postgres://app:[REDACTED:url-password#1]@db:5432/app
	// MAX_TOKENS=4096
	// github-token 20 60
	// url-password 89 103
}

func ExampleRedactor_RedactBytes() {
	r, _ := redact.New(redact.Config{})
	line := `{"type":"tool_result","content":"$ cat .env\nSTRIPE_KEY=sk_live_q8W2xZ0pL4vR7nT1yB6cK3mH\nPORT=8080"}`
	out, _ := r.RedactBytes([]byte(line))
	fmt.Println(string(out))
	fmt.Println(json.Valid(out))
	// Output:
	// {"type":"tool_result","content":"$ cat .env\nSTRIPE_KEY=[REDACTED:stripe-api-key#1]\nPORT=8080"}
	// true
}

func ExampleRedactor_AddValue() {
	r, _ := redact.New(redact.Config{})
	r.AddValue("correct horse battery staple") // e.g. a value from the user's environment
	fmt.Println(r.String(`login with "correct horse battery staple"`))
	// Output:
	// login with "[REDACTED:value#1]"
}

func ExampleRedactor_Transcript() {
	r, _ := redact.New(redact.Config{})
	args, _ := json.Marshal(map[string]string{"command": "curl -H 'Authorization: Bearer q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2j' https://api.acme.io"})
	t := compact.Transcript{Messages: []compact.Message{
		{ID: "1", Role: compact.RoleAssistant, Parts: []compact.Part{
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "call_1", Name: "bash", Arguments: args}},
		}},
	}}
	out, found := r.Transcript(t)
	fmt.Println(string(out.Messages[0].Parts[0].ToolCall.Arguments))
	fmt.Println(found[0].Rule, found[0].Field)
	// Output:
	// {"command":"curl -H 'Authorization: Bearer [REDACTED:authorization#1]' https://api.acme.io"}
	// authorization arguments
}

func ExampleLoadRules() {
	cfg, err := redact.LoadRules(strings.NewReader(`
[[rules]]
id = "acme-key"
regex = '''acme_(?:live|test)_([a-z0-9]{24})'''
secretGroup = 1
keywords = ["acme_"]
`))
	if err != nil {
		panic(err)
	}
	r, _ := redact.New(cfg)
	fmt.Println(r.String("deploying with acme_live_q8w2xz0pl4vr7nt1yb6ck3mh"))
	// Output:
	// deploying with acme_live_[REDACTED:acme-key#1]
}
