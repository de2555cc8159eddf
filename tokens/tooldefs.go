package tokens

import (
	"encoding/json"
	"strings"

	"github.com/compactkit/compact"
)

// Tool definition overheads from OpenAI's cookbook ("How to count tokens
// with tiktoken", num_tokens_for_tools), which reproduces the API's
// prompt_tokens for gpt-3.5-turbo and gpt-4 (cl100k_base) and gpt-4o and
// gpt-4o-mini (o200k_base).
const (
	funcInitO200k  = 7  // per function, o200k_base models
	funcInitCl100k = 10 // per function, cl100k_base models
	propInit       = 3  // once per function with properties
	propKey        = 3  // per property
	enumInit       = -3 // per property with an enum
	enumItem       = 3  // per enum value
	funcEnd        = 12 // once for all the definitions
)

// Tools counts the tool definitions offered with a prompt: 0 when there
// are none. See CountMessages.
func (c *Counter) Tools(tools []compact.ToolDef) int {
	if len(tools) == 0 {
		return 0
	}
	if c.cache == nil {
		return c.scale(c.countTools(tools))
	}
	var ch contentHasher
	ch.init(c.scheme + "|tools")
	for _, t := range tools {
		ch.str(t.Name)
		ch.str(t.Description)
		ch.bytes(t.Parameters)
	}
	key := ch.sum()
	if n, ok := c.cache.get(key); ok {
		return c.scale(n)
	}
	n := c.countTools(tools)
	c.cache.put(key, n)
	return c.scale(n)
}

// schema is the part of a JSON Schema the formula reads.
type schema struct {
	Type        json.RawMessage    `json:"type"`
	Description string             `json:"description"`
	Enum        []json.RawMessage  `json:"enum"`
	Properties  map[string]*schema `json:"properties"`
	Items       *schema            `json:"items"`
}

func (c *Counter) countTools(tools []compact.ToolDef) int {
	funcInit := funcInitO200k
	if c.enc != nil && c.enc.Name() == Cl100kBase {
		funcInit = funcInitCl100k
	}
	n := funcEnd
	for _, t := range tools {
		n += funcInit + c.raw(t.Name+":"+strings.TrimSuffix(t.Description, "."))
		var params schema
		if len(t.Parameters) > 0 && json.Unmarshal(t.Parameters, &params) != nil {
			// Not a schema the formula can read: count its text.
			n += c.raw(string(t.Parameters))
			continue
		}
		n += c.countProperties(params.Properties)
	}
	return n
}

// countProperties applies the cookbook's per-property rule. The cookbook
// stops at the first level; nested objects (and arrays of objects) are
// counted by the same rule one level down, which is how OpenAI renders
// them too (as nested TypeScript types).
func (c *Counter) countProperties(props map[string]*schema) int {
	if len(props) == 0 {
		return 0
	}
	n := propInit
	for name, p := range props {
		if p == nil {
			p = &schema{}
		}
		n += propKey
		if len(p.Enum) > 0 {
			n += enumInit
			for _, v := range p.Enum {
				var s string
				if json.Unmarshal(v, &s) != nil {
					s = string(v)
				}
				n += enumItem + c.raw(s)
			}
		}
		n += c.raw(name + ":" + typeName(p.Type) + ":" + strings.TrimSuffix(p.Description, "."))
		n += c.countProperties(p.Properties)
		if p.Items != nil {
			n += c.countProperties(p.Items.Properties)
		}
	}
	return n
}

// typeName renders a schema type: "string", or ["string","null"] as
// "string | null".
func typeName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, " | ")
	}
	return ""
}
