package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// Model is what compact knows of a model: its tokenizer, its context window
// and the output it needs room for.
type Model struct {
	Name string `json:"name" toml:"name"`
	// Encoding is "o200k_base" or "cl100k_base" for exact counts, or "" for
	// the estimator. In a configuration file, "estimate" asks for the
	// estimator explicitly and "" keeps the encoding of the entry the name
	// already matches.
	Encoding string `json:"encoding" toml:"encoding"`
	// Window is the context window in tokens: prompt and reply together.
	Window int `json:"window" toml:"window"`
	// OutputReserve is the room to keep free for the reply (and reasoning)
	// when deciding whether a prompt still fits.
	OutputReserve int `json:"output_reserve" toml:"output_reserve"`
	// Estimated is true when counts for this model are estimates.
	Estimated bool `json:"estimated" toml:"-"`
	// Provider is who serves the model: openai, anthropic, google, meta,
	// qwen, deepseek, mistral. It picks the image pricing.
	Provider string `json:"provider,omitempty" toml:"provider"`
	// Aliases are further names the entry answers to, matched like Name.
	Aliases []string `json:"aliases,omitempty" toml:"aliases"`
	// Unknown is true for a name no entry matched: Window and
	// OutputReserve are then defaults and counts are estimates.
	Unknown bool `json:"unknown,omitempty" toml:"-"`
}

// Defaults for models the table does not know.
const (
	DefaultWindow        = 128_000
	DefaultOutputReserve = 8_192
)

// ErrInvalidModel is returned (wrapped) for a model entry that cannot be
// used: no name, a negative or missing window.
var ErrInvalidModel = errors.New("invalid model entry")

// builtinModels is the table as shipped. Windows and output limits are the
// providers' published figures; an output reserve is the provider's maximum
// output where that leaves the documented input limit (GPT-5: 400k window,
// 272k input), and a working default where the maximum output is the whole
// window or close to it. Later entries do not shadow earlier ones: the
// longest matching name wins.
var builtinModels = []Model{
	// OpenAI, o200k_base.
	{Name: "gpt-5", Encoding: O200kBase, Window: 400_000, OutputReserve: 128_000, Provider: "openai"},
	{Name: "gpt-5-chat", Encoding: O200kBase, Window: 128_000, OutputReserve: 16_384, Provider: "openai"},
	{Name: "gpt-5-pro", Encoding: O200kBase, Window: 400_000, OutputReserve: 128_000, Provider: "openai"},
	{Name: "gpt-4.1", Encoding: O200kBase, Window: 1_047_576, OutputReserve: 32_768, Provider: "openai"},
	{Name: "gpt-4.5", Encoding: O200kBase, Window: 128_000, OutputReserve: 16_384, Provider: "openai"},
	{Name: "gpt-4o", Encoding: O200kBase, Window: 128_000, OutputReserve: 16_384, Provider: "openai", Aliases: []string{"chatgpt-4o"}},
	{Name: "gpt-4o-mini", Encoding: O200kBase, Window: 128_000, OutputReserve: 16_384, Provider: "openai"},
	{Name: "o1", Encoding: O200kBase, Window: 200_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "o1-mini", Encoding: O200kBase, Window: 128_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "o1-preview", Encoding: O200kBase, Window: 128_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "o3", Encoding: O200kBase, Window: 200_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "o3-mini", Encoding: O200kBase, Window: 200_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "o4-mini", Encoding: O200kBase, Window: 200_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "codex-mini", Encoding: O200kBase, Window: 200_000, OutputReserve: 32_768, Provider: "openai"},
	{Name: "gpt-oss", Encoding: O200kBase, Window: 131_072, OutputReserve: 16_384, Provider: "openai"},
	// OpenAI, cl100k_base.
	{Name: "gpt-4", Encoding: Cl100kBase, Window: 8_192, OutputReserve: 2_048, Provider: "openai"},
	{Name: "gpt-4-32k", Encoding: Cl100kBase, Window: 32_768, OutputReserve: 4_096, Provider: "openai"},
	{Name: "gpt-4-turbo", Encoding: Cl100kBase, Window: 128_000, OutputReserve: 4_096, Provider: "openai",
		Aliases: []string{"gpt-4-1106", "gpt-4-0125", "gpt-4-vision"}},
	{Name: "gpt-3.5-turbo", Encoding: Cl100kBase, Window: 16_385, OutputReserve: 4_096, Provider: "openai", Aliases: []string{"gpt-35-turbo"}},
	{Name: "text-embedding-3", Encoding: Cl100kBase, Window: 8_191, OutputReserve: 0, Provider: "openai", Aliases: []string{"text-embedding-ada-002"}},

	// Anthropic Claude. Claude Code's default output budget is 32k.
	{Name: "claude-opus-4-5", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic", Aliases: []string{"claude-4-5-opus", "opus"}},
	{Name: "claude-opus-4-1", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic", Aliases: []string{"claude-4-1-opus"}},
	{Name: "claude-opus-4", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic", Aliases: []string{"claude-4-opus"}},
	{Name: "claude-sonnet-4-5", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic", Aliases: []string{"claude-4-5-sonnet", "sonnet"}},
	{Name: "claude-sonnet-4", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic", Aliases: []string{"claude-4-sonnet"}},
	{Name: "claude-haiku-4-5", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic", Aliases: []string{"claude-4-5-haiku", "haiku"}},
	{Name: "claude-3-7-sonnet", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic"},
	{Name: "claude-3-5-sonnet", Window: 200_000, OutputReserve: 8_192, Provider: "anthropic"},
	{Name: "claude-3-5-haiku", Window: 200_000, OutputReserve: 8_192, Provider: "anthropic"},
	{Name: "claude-3-opus", Window: 200_000, OutputReserve: 4_096, Provider: "anthropic"},
	{Name: "claude-3-sonnet", Window: 200_000, OutputReserve: 4_096, Provider: "anthropic"},
	{Name: "claude-3-haiku", Window: 200_000, OutputReserve: 4_096, Provider: "anthropic"},
	{Name: "claude", Window: 200_000, OutputReserve: 32_000, Provider: "anthropic"},

	// Google Gemini.
	{Name: "gemini-3-pro", Window: 1_048_576, OutputReserve: 65_536, Provider: "google"},
	{Name: "gemini-2.5-pro", Window: 1_048_576, OutputReserve: 65_536, Provider: "google"},
	{Name: "gemini-2.5-flash", Window: 1_048_576, OutputReserve: 65_536, Provider: "google", Aliases: []string{"gemini-flash-latest"}},
	{Name: "gemini-2.5-flash-lite", Window: 1_048_576, OutputReserve: 65_536, Provider: "google", Aliases: []string{"gemini-flash-lite-latest"}},
	{Name: "gemini-2.0-flash", Window: 1_048_576, OutputReserve: 8_192, Provider: "google"},
	{Name: "gemini-1.5-pro", Window: 2_097_152, OutputReserve: 8_192, Provider: "google"},
	{Name: "gemini-1.5-flash", Window: 1_048_576, OutputReserve: 8_192, Provider: "google"},

	// Meta Llama.
	{Name: "llama-4-maverick", Window: 1_048_576, OutputReserve: 8_192, Provider: "meta"},
	{Name: "llama-4-scout", Window: 10_485_760, OutputReserve: 8_192, Provider: "meta"},
	{Name: "llama-3.3", Window: 131_072, OutputReserve: 8_192, Provider: "meta", Aliases: []string{"llama3.3"}},
	{Name: "llama-3.2", Window: 131_072, OutputReserve: 8_192, Provider: "meta", Aliases: []string{"llama3.2"}},
	{Name: "llama-3.1", Window: 131_072, OutputReserve: 8_192, Provider: "meta", Aliases: []string{"llama3.1"}},
	{Name: "llama-3", Window: 8_192, OutputReserve: 2_048, Provider: "meta", Aliases: []string{"llama3"}},

	// Qwen.
	{Name: "qwen3-coder", Window: 262_144, OutputReserve: 65_536, Provider: "qwen"},
	{Name: "qwen3-max", Window: 262_144, OutputReserve: 32_768, Provider: "qwen"},
	{Name: "qwen3", Window: 131_072, OutputReserve: 32_768, Provider: "qwen"},
	{Name: "qwen3-235b-a22b-2507", Window: 262_144, OutputReserve: 32_768, Provider: "qwen", Aliases: []string{"qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b-thinking-2507"}},
	{Name: "qwen-max", Window: 32_768, OutputReserve: 8_192, Provider: "qwen"},
	{Name: "qwen-plus", Window: 131_072, OutputReserve: 16_384, Provider: "qwen"},
	{Name: "qwen-turbo", Window: 1_000_000, OutputReserve: 16_384, Provider: "qwen"},
	{Name: "qwen2.5", Window: 131_072, OutputReserve: 8_192, Provider: "qwen"},
	{Name: "qwq", Window: 131_072, OutputReserve: 32_768, Provider: "qwen"},

	// DeepSeek.
	{Name: "deepseek-chat", Window: 131_072, OutputReserve: 8_192, Provider: "deepseek", Aliases: []string{"deepseek-v3"}},
	{Name: "deepseek-reasoner", Window: 131_072, OutputReserve: 32_768, Provider: "deepseek", Aliases: []string{"deepseek-r1"}},
	{Name: "deepseek-coder", Window: 131_072, OutputReserve: 8_192, Provider: "deepseek"},

	// Mistral.
	{Name: "mistral-large", Window: 131_072, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "mistral-medium", Window: 131_072, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "mistral-small", Window: 131_072, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "codestral", Window: 262_144, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "devstral", Window: 131_072, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "magistral", Window: 131_072, OutputReserve: 32_768, Provider: "mistral"},
	{Name: "ministral", Window: 131_072, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "pixtral-large", Window: 131_072, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "mistral-nemo", Window: 131_072, OutputReserve: 8_192, Provider: "mistral", Aliases: []string{"open-mistral-nemo"}},
	{Name: "mixtral-8x22b", Window: 65_536, OutputReserve: 8_192, Provider: "mistral"},
	{Name: "mixtral-8x7b", Window: 32_768, OutputReserve: 4_096, Provider: "mistral"},
	{Name: "mistral-7b", Window: 32_768, OutputReserve: 4_096, Provider: "mistral"},
}

// Models is a model table: names matched by prefix to what compact knows of
// them. It is safe for concurrent use.
type Models struct {
	mu      sync.RWMutex
	entries []modelEntry
}

type modelEntry struct {
	model Model
	keys  []string // normalised Name and Aliases
}

// NewModels returns a table holding the built-in entries.
func NewModels() *Models {
	t := &Models{}
	for _, m := range builtinModels {
		m.Estimated = m.Encoding == ""
		t.entries = append(t.entries, newEntry(m))
	}
	return t
}

// defaultModels is built on first use, not at start-up.
var defaultModels = sync.OnceValue(NewModels)

// DefaultModels returns the table that LookupModel and ForModel use. A
// program may Set or Load entries into it at start-up to override the
// built-in ones.
func DefaultModels() *Models { return defaultModels() }

// LookupModel returns the default table's entry for name. ok is false for
// unknown models, which get an estimator entry with the default window.
func LookupModel(name string) (m Model, ok bool) {
	return defaultModels().Lookup(name)
}

func newEntry(m Model) modelEntry {
	e := modelEntry{model: m}
	for _, n := range append([]string{m.Name}, m.Aliases...) {
		if k := normalizeModel(n); k != "" {
			e.keys = append(e.keys, k)
		}
	}
	return e
}

// Lookup returns the entry whose name or alias is the longest prefix of
// name, compared after normalisation: case, provider prefixes
// ("openai/", "anthropic.", "us.anthropic.", "models/", "ft:"), and "."
// against "-" in versions ("claude-sonnet-4.5" is "claude-sonnet-4-5").
// A prefix must end where a name part ends: "gpt-4" matches "gpt-4-0613"
// but not "gpt-4o". ok is false when nothing matches; the model returned
// then has the default window and reserve and is marked Unknown and
// Estimated.
func (t *Models) Lookup(name string) (Model, bool) {
	key := normalizeModel(name)
	t.mu.RLock()
	defer t.mu.RUnlock()
	best, bestLen := -1, 0
	for i, e := range t.entries {
		for _, k := range e.keys {
			if len(k) >= bestLen && matchesPrefix(key, k) {
				best, bestLen = i, len(k) // later entries win ties: overrides come last
			}
		}
	}
	if best < 0 {
		return Model{Name: name, Window: DefaultWindow, OutputReserve: DefaultOutputReserve, Estimated: true, Unknown: true}, false
	}
	m := t.entries[best].model
	m.Aliases = slices.Clone(m.Aliases)
	return m, true
}

func matchesPrefix(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	switch name[len(prefix)] {
	case '-', ':', '@', '_', ' ':
		return true
	}
	return false
}

// normalizeModel lower-cases name, strips routing prefixes and writes
// version dots as dashes.
func normalizeModel(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	s = strings.TrimPrefix(s, "ft:")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	for {
		before := s
		for _, p := range []string{"us.", "eu.", "apac.", "global.", "anthropic.", "meta.", "mistral.", "deepseek.", "qwen.", "openai.", "meta-"} {
			s = strings.TrimPrefix(s, p)
		}
		if s == before {
			break
		}
	}
	return strings.ReplaceAll(s, ".", "-")
}

// ReserveFor returns the output reserve of m in a window set smaller than
// its own (to compact early, or for a deployment with less context): its
// reserve, or, where that would take more than half of window, its share
// of window (scaled). The compactor and a model table's entries both use
// it, so a window means the same wherever it is set.
func (m Model) ReserveFor(window int) (reserve int, scaled bool) {
	if 2*m.OutputReserve <= window || m.Window <= 0 {
		return m.OutputReserve, false
	}
	return max(int(math.Round(float64(m.OutputReserve)*float64(window)/float64(m.Window))), 1), true
}

// Set adds entries to the table, or overrides the entries with the same
// name. Fields left zero in m keep the values of the entry m.Name matches
// now, so {"name": "gpt-4o", "window": 64000} only lowers a window (an
// inherited output reserve that would take more than half of the lower
// window is scaled to the model's share of it). A new name needs a window. Encoding "estimate" selects the estimator.
func (t *Models) Set(ms ...Model) error {
	for _, m := range ms {
		if normalizeModel(m.Name) == "" {
			return fmt.Errorf("%w: no name", ErrInvalidModel)
		}
		base, known := t.Lookup(m.Name)
		if known && m.Aliases == nil && normalizeModel(base.Name) == normalizeModel(m.Name) {
			m.Aliases = base.Aliases
		}
		switch m.Encoding {
		case "":
			if known {
				m.Encoding = base.Encoding
			}
		case "estimate":
			m.Encoding = ""
		case O200kBase, Cl100kBase:
		default:
			return fmt.Errorf("model %q: %w %q (known: %s, %s, estimate)", m.Name, ErrUnknownEncoding, m.Encoding, O200kBase, Cl100kBase)
		}
		if m.Window == 0 && known {
			m.Window = base.Window
		}
		if m.OutputReserve == 0 && known {
			m.OutputReserve, _ = base.ReserveFor(m.Window)
		}
		if m.Provider == "" && known {
			m.Provider = base.Provider
		}
		if m.Window <= 0 || m.OutputReserve < 0 || m.OutputReserve >= m.Window {
			return fmt.Errorf("%w %q: window %d, output reserve %d (a window above the reserve is needed)", ErrInvalidModel, m.Name, m.Window, m.OutputReserve)
		}
		m.Estimated = m.Encoding == ""
		m.Unknown = false
		e := newEntry(m)
		t.mu.Lock()
		t.entries = slices.DeleteFunc(t.entries, func(old modelEntry) bool {
			return old.keys[0] == e.keys[0]
		})
		t.entries = append(t.entries, e)
		t.mu.Unlock()
	}
	return nil
}

// modelFile is the configuration file layout: {"models": [...]} in JSON,
// or [[models]] tables in TOML. A JSON file may also be a bare array.
type modelFile struct {
	Models []Model `json:"models" toml:"models"`
}

// Load reads model entries from a JSON or TOML document and Sets them.
// name is the file's name: it labels errors, and its extension (.toml or
// .json) says which of the two the document is; without either, valid
// JSON or a document opening with "{" is JSON, anything else TOML. In TOML the models are [[models]] tables with a name each, or
// [models.NAME] tables named by their key.
func (t *Models) Load(r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var f modelFile
	trimmed := bytes.TrimSpace(data)
	switch {
	case isTOML(name, trimmed):
		if f.Models, err = decodeTOMLModels(data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	case bytes.HasPrefix(trimmed, []byte("[")):
		if err := decodeStrict(trimmed, &f.Models); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	default:
		if err := decodeStrict(trimmed, &f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	for i, m := range f.Models {
		if err := t.Set(m); err != nil {
			return fmt.Errorf("%s: model %d: %w", name, i+1, err)
		}
	}
	return nil
}

// isTOML reports whether a models file is TOML: by its name's extension,
// else by its content: valid JSON, or anything opening with "{", is JSON.
func isTOML(name string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".toml":
		return true
	case ".json":
		return false
	}
	return !json.Valid(data) && !bytes.HasPrefix(data, []byte("{"))
}

// decodeTOMLModels reads the models of a TOML document: an array of
// tables, or a table of tables whose keys name the models (a table's own
// name, if given, wins). Any other key is an error.
func decodeTOMLModels(data []byte) ([]Model, error) {
	var doc struct {
		Models toml.Primitive `toml:"models"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, err
	}
	var models []Model
	switch typ := md.Type("models"); {
	case !md.IsDefined("models"):
	case typ == "Array" || typ == "ArrayHash":
		if err := md.PrimitiveDecode(doc.Models, &models); err != nil {
			return nil, err
		}
	default: // [models.NAME] tables (an implicit table has no type)
		var byName map[string]Model
		if err := md.PrimitiveDecode(doc.Models, &byName); err != nil {
			return nil, err
		}
		for _, key := range slices.Sorted(maps.Keys(byName)) {
			m := byName[key]
			if m.Name == "" {
				m.Name = key
			}
			models = append(models, m)
		}
	}
	if un := md.Undecoded(); len(un) > 0 {
		return nil, fmt.Errorf("unknown key %s", un[0])
	}
	return models, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// List returns the table's entries, built-in ones first, overrides last.
func (t *Models) List() []Model {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Model, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.model
		out[i].Aliases = slices.Clone(e.model.Aliases)
	}
	return out
}
