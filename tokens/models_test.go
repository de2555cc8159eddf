package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookupModel(t *testing.T) {
	cases := []struct {
		name, want, encoding string
		window               int
	}{
		{"gpt-4o", "gpt-4o", O200kBase, 128_000},
		{"gpt-4o-2024-08-06", "gpt-4o", O200kBase, 128_000},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", O200kBase, 128_000},
		{"chatgpt-4o-latest", "gpt-4o", O200kBase, 128_000},
		{"ft:gpt-4o-mini-2024-07-18:acme::AbC123", "gpt-4o-mini", O200kBase, 128_000},
		{"openai/gpt-5.1-codex", "gpt-5", O200kBase, 400_000},
		{"gpt-5-mini", "gpt-5", O200kBase, 400_000},
		{"gpt-5-chat-latest", "gpt-5-chat", O200kBase, 128_000},
		{"gpt-4.1-nano", "gpt-4.1", O200kBase, 1_047_576},
		{"o3-pro", "o3", O200kBase, 200_000},
		{"o1-mini-2024-09-12", "o1-mini", O200kBase, 128_000},
		{"gpt-oss-120b", "gpt-oss", O200kBase, 131_072},
		{"gpt-4", "gpt-4", Cl100kBase, 8_192},
		{"gpt-4-0613", "gpt-4", Cl100kBase, 8_192},
		{"gpt-4-32k-0613", "gpt-4-32k", Cl100kBase, 32_768},
		{"gpt-4-1106-preview", "gpt-4-turbo", Cl100kBase, 128_000},
		{"gpt-4-turbo-2024-04-09", "gpt-4-turbo", Cl100kBase, 128_000},
		{"GPT-3.5-Turbo-0125", "gpt-3.5-turbo", Cl100kBase, 16_385},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "", 200_000},
		{"anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", "", 200_000},
		{"claude-sonnet-4-20250514", "claude-sonnet-4", "", 200_000},
		{"us.anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet", "", 200_000},
		{"claude-3-5-sonnet@20240620", "claude-3-5-sonnet", "", 200_000},
		{"claude-opus-4-1-20250805", "claude-opus-4-1", "", 200_000},
		{"sonnet", "claude-sonnet-4-5", "", 200_000},
		{"models/gemini-2.5-pro", "gemini-2.5-pro", "", 1_048_576},
		{"gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite", "", 1_048_576},
		{"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3", "", 131_072},
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1", "", 131_072},
		{"llama3.1:8b", "llama-3.1", "", 131_072},
		{"Qwen/Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder", "", 262_144},
		{"qwen2.5-coder:32b", "qwen2.5", "", 131_072},
		{"deepseek-ai/DeepSeek-R1", "deepseek-reasoner", "", 131_072},
		{"deepseek-chat", "deepseek-chat", "", 131_072},
		{"mistralai/Mistral-Large-Instruct-2411", "mistral-large", "", 131_072},
		{"codestral-2501", "codestral", "", 262_144},
	}
	for _, tc := range cases {
		m, ok := LookupModel(tc.name)
		if !ok || m.Name != tc.want || m.Encoding != tc.encoding || m.Window != tc.window {
			t.Errorf("LookupModel(%q) = %+v, %v; want %s (%q, window %d)", tc.name, m, ok, tc.want, tc.encoding, tc.window)
		}
		if m.Estimated != (tc.encoding == "") || m.Unknown {
			t.Errorf("LookupModel(%q): estimated %v, unknown %v", tc.name, m.Estimated, m.Unknown)
		}
		if m.OutputReserve <= 0 || m.OutputReserve >= m.Window {
			t.Errorf("LookupModel(%q): output reserve %d of window %d", tc.name, m.OutputReserve, m.Window)
		}
	}
	for _, name := range []string{"", "gpt-4x", "gpt", "my-local-model", "o10", "claudette"} {
		m, ok := LookupModel(name)
		if ok || !m.Unknown || !m.Estimated || m.Name != name || m.Window != DefaultWindow {
			t.Errorf("LookupModel(%q) = %+v, %v; want an unknown estimated model", name, m, ok)
		}
	}
}

func TestModelsSetAndLoad(t *testing.T) {
	tab := NewModels()
	jsonDoc := `{"models": [
		{"name": "gpt-4o", "window": 64000},
		{"name": "my-model", "encoding": "cl100k_base", "window": 32000, "output_reserve": 4000, "aliases": ["mine"]},
		{"name": "claude-sonnet-4-5", "encoding": "o200k_base"}
	]}`
	if err := tab.Load(strings.NewReader(jsonDoc), "models.json"); err != nil {
		t.Fatal(err)
	}
	tomlDoc := `
[[models]]
name = "local-llm"
window = 16384
output_reserve = 2048

[[models]]
name = "gpt-4.1"
encoding = "estimate"
`
	if err := tab.Load(strings.NewReader(tomlDoc), "models.toml"); err != nil {
		t.Fatal(err)
	}
	check := func(name string, want Model) {
		t.Helper()
		got, ok := tab.Lookup(name)
		if !ok || got.Name != want.Name || got.Encoding != want.Encoding || got.Window != want.Window ||
			got.OutputReserve != want.OutputReserve || got.Estimated != want.Estimated {
			t.Errorf("Lookup(%q) = %+v, want %+v", name, got, want)
		}
	}
	check("gpt-4o-2024-08-06", Model{Name: "gpt-4o", Encoding: O200kBase, Window: 64000, OutputReserve: 16384})
	check("gpt-4o-mini", Model{Name: "gpt-4o-mini", Encoding: O200kBase, Window: 128000, OutputReserve: 16384})
	check("chatgpt-4o-latest", Model{Name: "gpt-4o", Encoding: O200kBase, Window: 64000, OutputReserve: 16384})
	check("mine-v2", Model{Name: "my-model", Encoding: Cl100kBase, Window: 32000, OutputReserve: 4000})
	check("claude-sonnet-4-5-20250929", Model{Name: "claude-sonnet-4-5", Encoding: O200kBase, Window: 200000, OutputReserve: 32000})
	check("local-llm", Model{Name: "local-llm", Window: 16384, OutputReserve: 2048, Estimated: true})
	check("gpt-4.1-mini", Model{Name: "gpt-4.1", Window: 1_047_576, OutputReserve: 32_768, Estimated: true})

	// The default table is untouched.
	if m, _ := LookupModel("gpt-4o"); m.Window != 128_000 {
		t.Errorf("default table changed: %+v", m)
	}
	// A bare JSON array works too.
	if err := tab.Load(strings.NewReader(`[{"name": "arr-model", "window": 1000, "output_reserve": 100}]`), "a.json"); err != nil {
		t.Fatal(err)
	}
	check("arr-model", Model{Name: "arr-model", Window: 1000, OutputReserve: 100, Estimated: true})
}

// TestModelsLoadTOMLShapes: a TOML models file may name its models by
// table key ([models.NAME]) as well as list them ([[models]]); the parser
// is picked by the extension, else by the content.
func TestModelsLoadTOMLShapes(t *testing.T) {
	tab := NewModels()
	doc := "[models.local-llm]\nwindow = 16384\noutput_reserve = 2048\n\n[models.\"my.model\"]\nname = \"named-model\"\nencoding = \"cl100k_base\"\nwindow = 32000\n"
	for _, file := range []string{"models.toml", "models"} {
		if err := tab.Load(strings.NewReader(doc), file); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m, ok := tab.Lookup("local-llm"); !ok || m.Window != 16384 || m.OutputReserve != 2048 || !m.Estimated {
			t.Errorf("%s: local-llm = %+v, %v", file, m, ok)
		}
		if m, ok := tab.Lookup("named-model"); !ok || m.Encoding != Cl100kBase || m.Window != 32000 {
			t.Errorf("%s: named-model = %+v, %v (a table's name wins over its key)", file, m, ok)
		}
	}
	// JSON without an extension is still JSON.
	if err := tab.Load(strings.NewReader(`[{"name": "j", "window": 1000}]`), "models"); err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Lookup("j"); !ok {
		t.Error("a bare JSON array without an extension was not read")
	}
}

func TestModelsLoadErrors(t *testing.T) {
	cases := []struct{ file, doc, want string }{
		{"models.json", `{"models": [{"name": "x", "window": 1000, "encoding": "p50k_base"}]}`, "p50k_base"},
		{"models.json", `{"models": [{"name": "new-model"}]}`, "window 0"},
		{"models.json", `{"models": [{"name": "m", "window": 100, "output_reserve": 100}]}`, "window 100"},
		{"models.json", `{"models": [{"window": 100}]}`, "no name"},
		{"models.json", `{"models": [{"name": "m", "window": 100, "colour": "red"}]}`, "colour"},
		{"models.json", `{"models": [`, "unexpected EOF"},
		{"models", `{"models": [`, "unexpected EOF"},
		{"models.toml", "[[models]]\nname = 3\n", "models.toml"},
		{"models.toml", "[[models]]\nname = \"m\"\nwindow = 100\ncolour = \"red\"\n", "colour"},
		{"models.toml", "[models.m]\nwindow = 100\ncolour = \"red\"\n", "colour"},
		{"models.toml", "[other]\nx = 1\n", "other"},
		// QA-14 item 4: a TOML table header first is TOML, by the extension,
		// and the error is the model's, not a JSON syntax error.
		{"m.toml", "[models.x]\nwindow = -5\n", `"x": window -5`},
		{"m.TOML", "[models.x]\nwindow = -5\n", `"x": window -5`},
		{"m.conf", "[models.x]\nwindow = -5\n", `"x": window -5`},
		// A .json file is JSON, whatever it looks like.
		{"m.json", "[models.x]\nwindow = 5\n", "invalid character"},
	}
	for _, tc := range cases {
		err := NewModels().Load(strings.NewReader(tc.doc), tc.file)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s: %q) error = %v, want one mentioning %q", tc.file, tc.doc, err, tc.want)
		}
	}
	err := NewModels().Set(Model{Name: "x", Window: 10, Encoding: "r50k_base"})
	if !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("Set with a bad encoding: %v", err)
	}
	if err := NewModels().Set(Model{Name: "y"}); !errors.Is(err, ErrInvalidModel) {
		t.Errorf("Set without a window: %v", err)
	}
}

func TestForModelUnknownFallsBackToEstimator(t *testing.T) {
	c, err := ForModel("some-local-model")
	if err != nil {
		t.Fatal(err)
	}
	m := c.Model()
	if c.Exact() || c.Encoding() != nil || !m.Unknown || !m.Estimated {
		t.Fatalf("unknown model counter: exact %v, model %+v", c.Exact(), m)
	}
	if got, want := c.Text("hello world, this is a test"), Estimate("hello world, this is a test"); got != want {
		t.Errorf("Text = %d, estimate %d", got, want)
	}
	c, err = ForModel("some-local-model", WithEncoding(O200kBase))
	if err != nil || !c.Exact() || c.Encoding().Name() != O200kBase {
		t.Fatalf("WithEncoding: %v, %v", c, err)
	}
	if _, err := ForModel("gpt-4o", WithEncoding("p50k_base")); !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("ForModel with a bad encoding: %v", err)
	}
}

// TestModelTableGolden keeps the built-in table in testdata/models.json, so
// that every change to a window or a reserve shows in review. Regenerate
// with go test ./tokens -run TestModelTableGolden -update.
func TestModelTableGolden(t *testing.T) {
	got, err := json.MarshalIndent(map[string]any{"models": NewModels().List()}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "models.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the model table differs from %s; run with -update and review the diff", path)
	}
	// The golden file is itself a valid configuration file.
	tab := NewModels()
	if err := tab.Load(bytes.NewReader(want), path); err != nil {
		t.Fatal(err)
	}
}

// TestModelsSetScalesInheritedReserve: a table entry that only lowers a
// window below twice the inherited output reserve gets the model's share of
// the window for the answer, as compactor does for a Window set on the
// command line (QA-39.7); a reserve the entry sets itself is taken as is.
func TestModelsSetScalesInheritedReserve(t *testing.T) {
	tab := NewModels()
	if err := tab.Set(Model{Name: "gpt-4o", Window: 2000}); err != nil {
		t.Fatalf("window 2000 refused: %v", err)
	}
	// 16384 × 2000 / 128000 = 256.
	if got, _ := tab.Lookup("gpt-4o"); got.Window != 2000 || got.OutputReserve != 256 {
		t.Errorf("got window %d, reserve %d; want 2000, 256", got.Window, got.OutputReserve)
	}
	if err := tab.Set(Model{Name: "gpt-4o-mini", Window: 64000}); err != nil {
		t.Fatal(err)
	}
	if got, _ := tab.Lookup("gpt-4o-mini"); got.OutputReserve != 16384 {
		t.Errorf("a reserve that fits was changed: %d", got.OutputReserve)
	}
	if err := tab.Set(Model{Name: "gpt-4o-mini", Window: 2000, OutputReserve: 4000}); !errors.Is(err, ErrInvalidModel) {
		t.Errorf("a reserve set above the window: err %v, want ErrInvalidModel", err)
	}
}
