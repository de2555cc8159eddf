package casegen

import "strings"

// A name is written in its words ("openai api key"); each context spells
// it in its own style.

func words(name string) []string { return strings.Fields(name) }

func title(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// upperSnake: OPENAI_API_KEY.
func upperSnake(name string) string { return strings.ToUpper(strings.Join(words(name), "_")) }

// snake: openai_api_key.
func snake(name string) string { return strings.Join(words(name), "_") }

// kebab: openai-api-key.
func kebab(name string) string { return strings.Join(words(name), "-") }

// dotted: openai.api.key.
func dotted(name string) string { return strings.Join(words(name), ".") }

// camel: openaiApiKey.
func camel(name string) string {
	ws := words(name)
	for i := 1; i < len(ws); i++ {
		ws[i] = title(ws[i])
	}
	return strings.Join(ws, "")
}

// goCamel: openaiAPIKey, as Go spells initialisms.
func goCamel(name string) string {
	ws := words(name)
	for i := range ws {
		if initialisms[ws[i]] {
			ws[i] = strings.ToUpper(ws[i])
		} else if i > 0 {
			ws[i] = title(ws[i])
		}
	}
	if initialisms[words(name)[0]] {
		ws[0] = strings.ToLower(ws[0])
	}
	return strings.Join(ws, "")
}

// goExported: OpenaiAPIKey.
func goExported(name string) string {
	ws := words(name)
	for i := range ws {
		if initialisms[ws[i]] {
			ws[i] = strings.ToUpper(ws[i])
		} else {
			ws[i] = title(ws[i])
		}
	}
	return strings.Join(ws, "")
}

// pascal: OpenaiApiKey.
func pascal(name string) string {
	ws := words(name)
	for i := range ws {
		ws[i] = title(ws[i])
	}
	return strings.Join(ws, "")
}

// header: X-Openai-Api-Key style, for a name used as a custom header.
func header(name string) string {
	ws := words(name)
	for i := range ws {
		ws[i] = title(ws[i])
	}
	return strings.Join(ws, "-")
}

var initialisms = map[string]bool{"api": true, "id": true, "url": true, "jwt": true, "aws": true, "ssh": true, "db": true,
	"tls": true, "hf": true, "gh": true, "dd": true, "smtp": true, "pat": true, "ci": true, "do": true, "tfe": true, "llm": true}

// styled returns name in one of the given styles, chosen at random.
func (g *gen) styled(name string, styles ...func(string) string) string {
	return pick(g, styles)(name)
}

// envName spells a name as an environment variable.
func envName(name string) string { return upperSnake(name) }
