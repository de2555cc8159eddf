// Package casegen writes a labelled set of redaction cases: every secret
// family crossed with every context an agent meets (HTTP headers, YAML,
// TOML, INI, .env files, JSON nested and escaped inside JSON strings,
// Python, JavaScript, Go, Ruby and shell source, command-line flags, URL
// query strings, docker run, Kubernetes Secrets, Terraform, connection
// strings, service-account files, log lines, secret-setting commands), and
// negatives in the same contexts: secret-named settings whose value is a
// reference, a placeholder, a hash, an id, a path or the name of another
// setting, and ids that look like tokens but are not secret.
//
// The set is deterministic for a seed: the same seed gives the same bytes.
// Seeds change the values, names, spellings, quoting and the variant of
// each context; the families and contexts stay. A redactor tuned on one
// seed and scored on others shows whether it learnt the contexts or the
// cases.
//
// Cases use the schema of the shared redaction corpus (id, kind, family,
// context, tags, text, secrets, keep), so its scorer reads them too. A
// secret is listed as it appears in the text (escaped once or twice inside
// JSON strings, base64 in a Kubernetes Secret); a case is caught when no
// run of the secret of min(len, max(12, ceil(len/2))) bytes survives, and
// a negative is a false positive when any of its keep strings is lost.
package casegen

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Case is one labelled text.
type Case struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"` // "pos": holds secrets; "neg": holds none
	Family  string   `json:"family"`
	Context string   `json:"context"`
	Tags    []string `json:"tags"`
	Text    string   `json:"text"`
	// Secrets must not survive redaction, as they appear in Text.
	Secrets []string `json:"secrets"`
	// Keep must survive: the names, and the values that are not secret.
	Keep []string `json:"keep"`
}

// Generate returns the cases for seed: one positive per family and
// context that can hold it, and negatives of every kind in every context.
func Generate(seed uint64) []Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, f := range families {
		for _, c := range contexts {
			if !c.holds(&f) {
				continue
			}
			g.positive(f, c)
		}
	}
	for _, n := range negatives {
		for _, c := range contexts {
			if c.positiveOnly || !n.anywhere && secretByConstruction[c.id] {
				continue
			}
			for i := 0; i < 3; i++ {
				g.negative(n, c)
			}
		}
	}
	for _, h := range lookalikes {
		for i := 0; i < 10; i++ {
			g.lookalike(h)
		}
	}
	return g.cases
}

// secretByConstruction are the contexts where any value is a secret,
// whatever it looks like: a Kubernetes Secret's data, a connection
// string's password, a value stored by a secret-setting command, a
// credentials file's secret. Only references and placeholders are
// negatives there.
var secretByConstruction = map[string]bool{"k8s-secret": true, "connection-string": true, "secret-command": true, "service-account": true}

// Write writes cases as JSON Lines.
func Write(w io.Writer, cases []Case) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}

// gen is the state of one generation.
type gen struct {
	r     *rand.Rand
	cases []Case
	n     int
}

func (g *gen) add(c Case) {
	g.n++
	c.ID = fmt.Sprintf("%s-%04d", c.Kind, g.n)
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if c.Secrets == nil {
		c.Secrets = []string{}
	}
	c.Keep = dedupe(c.Keep)
	for _, s := range c.Secrets {
		if !strings.Contains(c.Text, s) {
			panic(fmt.Sprintf("casegen: %s/%s: secret %.40q not in text:\n%s", c.Family, c.Context, s, c.Text))
		}
	}
	keep := c.Keep[:0]
	for _, k := range c.Keep {
		if !strings.Contains(c.Text, k) {
			panic(fmt.Sprintf("casegen: %s/%s: keep %q not in text:\n%s", c.Family, c.Context, k, c.Text))
		}
		// A keep string that overlaps a secret could never both survive
		// and the secret be masked: drop it.
		clash := false
		for _, s := range c.Secrets {
			if strings.Contains(s, k) || strings.Contains(k, s) || overlaps(c.Text, k, s) {
				clash = true
			}
		}
		if !clash {
			keep = append(keep, k)
		}
	}
	c.Keep = keep
	g.cases = append(g.cases, c)
}

// overlaps reports whether an occurrence of k in text overlaps one of s.
func overlaps(text, k, s string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], s)
		if j < 0 {
			return false
		}
		ss, se := i+j, i+j+len(s)
		for a := 0; ; {
			b := strings.Index(text[a:], k)
			if b < 0 {
				break
			}
			ks, ke := a+b, a+b+len(k)
			if ks < se && ss < ke {
				return true
			}
			a = ks + 1
		}
		i = ss + 1
	}
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s == "" {
			continue
		}
		dup := false
		for _, o := range out {
			if o == s {
				dup = true
			}
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out
}

// pick returns a random element.
func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// chance reports true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// Sample is one secret of a family, with a name it goes by: what a test
// plants where it checks that secrets never come out.
type Sample struct {
	Family string
	// Name is the secret's usual name, as an environment variable
	// (OPENAI_API_KEY), and Value the secret.
	Name, Value string
	// Shaped: the value has a vendor's shape; otherwise only its name
	// makes it secret. Multiline: the value spans lines (a PEM key).
	Shaped, Multiline bool
}

// Samples returns one secret of every family, deterministic for seed.
func Samples(seed uint64) []Sample {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5bd1e9955bd1e995))}
	out := make([]Sample, 0, len(families))
	for _, f := range families {
		out = append(out, Sample{Family: f.id, Name: envName(pick(g, f.names)), Value: f.value(g), Shaped: f.shaped, Multiline: f.multiline})
	}
	return out
}
