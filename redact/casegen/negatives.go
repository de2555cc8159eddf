package casegen

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// negKind is a kind of value that sits under a secret-like name without
// being a secret.
type negKind struct {
	id string
	// anywhere: the kind fits every context. Otherwise it stays out of
	// contexts where any value is secret by construction (a Kubernetes
	// Secret's data, a connection string's password).
	anywhere bool
	// value returns the name (in words) and the value for a context.
	value func(g *gen, c *context) (string, val)
}

// secretName draws a secret-like name from the families.
func (g *gen) secretName() string { return pick(g, pick(g, families).names) }

var negatives = []negKind{
	{id: "reference", anywhere: true, value: func(g *gen, c *context) (string, val) {
		name := g.secretName()
		if c.ref != nil && g.chance(0.6) {
			return name, c.ref(g, name)
		}
		e, k, s := envName(name), kebab(name), snake(name)
		return name, lit(pick(g, []string{
			"${" + e + "}", "$" + e, "${{ secrets." + e + " }}", "{{ .Values." + camel(name) + " }}", "{{ " + s + " }}",
			"vault:secret/data/acme#" + s, "op://Engineering/acme-api/" + k,
			"arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/acme/" + k + "-" + g.random(6, alnum),
			"@Microsoft.KeyVault(SecretUri=https://acme-kv.vault.azure.net/secrets/" + k + "/)",
			"projects/acme-prod/secrets/" + k + "/versions/latest", "<path:secret/data/acme#" + s + ">",
			"ref+vault://secret/acme#/" + s, "%(" + s + ")s", "#{" + e + "}",
		}))
	}},
	{id: "placeholder", anywhere: true, value: func(g *gen, c *context) (string, val) {
		name := g.secretName()
		return name, lit(pick(g, []string{
			"your-api-key-here", "<YOUR_API_KEY>", "changeme", "xxxxxxxxxxxxxxxxxxxxxxxx", "REPLACE_ME", "********",
			"sk-...", "<redacted>", "TODO", "dummy-value", "example-token", "insert-your-token", "<token>", "YOUR_TOKEN_HERE",
			"<" + kebab(name) + ">", "your_" + snake(name), "xxxx-xxxx-xxxx-xxxx", "…", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			"sk-proj-XXXXXXXXXXXXXXXXXXXXXXXX", "AKIAXXXXXXXXXXXXXXXX", "password123-change-me", "<insert " + name + ">",
		}))
	}},
	{id: "hash", value: func(g *gen, c *context) (string, val) {
		name := g.secretName()
		hashes := []string{
			"sha256:" + g.hex(64),
			"$2b$12$" + g.random(53, alnum+"./"),
			"$argon2id$v=19$m=65536,t=3,p=4$" + strings.TrimRight(base64.StdEncoding.EncodeToString(g.bytes(16)), "=") + "$" + strings.TrimRight(base64.StdEncoding.EncodeToString(g.bytes(32)), "="),
			"SHA256:" + strings.TrimRight(base64.StdEncoding.EncodeToString(g.bytes(32)), "="),
			"sha512-" + base64.StdEncoding.EncodeToString(g.bytes(64)),
		}
		if g.chance(0.5) {
			// The name says it holds a hash; the value may be a bare digest.
			name += " " + pick(g, []string{"hash", "sha256", "digest", "fingerprint", "checksum"})
			hashes = append(hashes, g.hex(64), g.hex(40))
		}
		return name, lit(pick(g, hashes))
	}},
	{id: "id", value: func(g *gen, c *context) (string, val) {
		name := g.secretName()
		suffix := pick(g, []string{"id", "name", "type", "expires at", "version", "ttl", "length", "region", "owner", "scope", "issuer"})
		if suffix == "id" && name == "private key" {
			suffix = "name" // a service account's private_key_id counts as secret (issue 17)
		}
		name += " " + suffix
		var v string
		switch suffix {
		case "id":
			v = pick(g, []string{g.uuid(), "key_" + g.hex(16), fmt.Sprint(1e6 + g.r.IntN(9e6)), "arn:aws:kms:us-east-1:123456789012:key/" + g.uuid()})
		case "name":
			v = pick(g, []string{"prod-" + kebab(g.secretName()), "acme-api-" + pick(g, []string{"primary", "ci", "deploy"}), "default"})
		case "type":
			v = pick(g, []string{"bearer", "Bearer", "service_account", "oauth2", "personal_access_token", "api_key"})
		case "expires at":
			v = fmt.Sprintf("2026-%02d-%02dT00:00:00Z", 1+g.r.IntN(12), 1+g.r.IntN(28))
		case "version":
			v = fmt.Sprintf("v%d", 1+g.r.IntN(9))
		case "ttl":
			v = pick(g, []string{"3600", "24h", "15m", "7d"})
		case "length":
			v = pick(g, []string{"12", "32", "64"})
		case "region":
			v = pick(g, []string{"eu-west-1", "us-east-1", "westeurope"})
		case "owner":
			v = pick(g, []string{"platform-team", "alice@acme.io", "ci-bot"})
		case "scope":
			v = pick(g, []string{"read:org", "repo,workflow", "https://www.googleapis.com/auth/cloud-platform"})
		default:
			v = "https://" + g.host() + "/oauth"
		}
		return name, lit(v)
	}},
	{id: "path", value: func(g *gen, c *context) (string, val) {
		name := g.secretName()
		if g.chance(0.5) {
			name += " " + pick(g, []string{"file", "path"})
		}
		k, s := kebab(name), snake(name)
		return name, lit(pick(g, []string{
			"/run/secrets/" + s, "/etc/ssl/private/server.key", "~/.config/acme/" + s, "./secrets/" + k + ".txt",
			"/var/run/secrets/kubernetes.io/serviceaccount/token", "/home/dev/.config/gcloud/application_default_credentials.json",
			"secrets/" + k + ".enc.yaml", "/etc/acme/" + k + ".pem", "./keys/id_ed25519", `C:\Users\dev\.acme\credentials.json`,
		}))
	}},
	{id: "name", value: func(g *gen, c *context) (string, val) {
		// The value names another setting or a secret store entry.
		name := g.secretName()
		other := g.secretName()
		switch g.r.IntN(5) {
		case 0:
			return name + " " + pick(g, []string{"env", "env var", "variable"}), lit(envName(other))
		case 1:
			return name, lit(envName(other))
		case 2:
			return name + " " + pick(g, []string{"secret ref", "ref", "secret name"}), lit(kebab(other))
		case 3:
			return name, lit(pick(g, []string{"acme-", "prod-", "app-"}) + kebab(other))
		}
		return name, lit(dotted(other))
	}},
}

// lookalike is a non-secret that looks like a token, under a name that is
// not secret-like: ids, digests, public keys.
type lookalike struct {
	id     string
	render func(g *gen) (string, []string)
}

var lookalikes = []lookalike{
	{id: "request-id", render: func(g *gen) (string, []string) {
		id, amz := g.uuid(), g.random(16, upper+digits)
		return fmt.Sprintf("< HTTP/1.1 200 OK\n< X-Request-Id: %s\n< x-amz-request-id: %s\n< cf-ray: %s-SJC\n", id, amz, g.hex(16)), []string{id, amz}
	}},
	{id: "llm-object-ids", render: func(g *gen) (string, []string) {
		a, b, c := "chatcmpl-"+g.random(29, alnum), "call_"+g.random(24, alnum), "msg_01"+g.random(22, alnum)
		return fmt.Sprintf(`{"id":"%s","object":"chat.completion","choices":[{"message":{"tool_calls":[{"id":"%s","type":"function"}]}}],"previous":"%s"}`+"\n", a, b, c), []string{a, b, c}
	}},
	{id: "git", render: func(g *gen) (string, []string) {
		a, b := g.hex(40), g.hex(7)
		return fmt.Sprintf("commit %s\nAuthor: Dev <dev@acme.io>\n\n    fix token refresh (%s)\n", a, b), []string{a, b}
	}},
	{id: "digests", render: func(g *gen) (string, []string) {
		d, i := g.hex(64), "sha512-"+base64.StdEncoding.EncodeToString(g.bytes(64))
		return fmt.Sprintf("image: ghcr.io/acme/api@sha256:%s\n\"integrity\": \"%s\"\n", d, i), []string{d, i}
	}},
	{id: "tracing", render: func(g *gen) (string, []string) {
		t, s := g.hex(32), g.hex(16)
		return fmt.Sprintf("level=info trace_id=%s span_id=%s msg=\"token refreshed\" expires_in=3600\n", t, s), []string{t, s}
	}},
	{id: "public-keys", render: func(g *gen) (string, []string) {
		n := base64.RawURLEncoding.EncodeToString(g.bytes(256))
		ssh := "AAAAC3NzaC1lZDI1NTE5AAAAI" + g.random(43, b64)
		return fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":"%s","use":"sig","n":"%s","e":"AQAB"}]}`+"\nssh-ed25519 %s deploy@ci\n", g.hex(16), n, ssh), []string{n, ssh}
	}},
	{id: "uuid-ids", render: func(g *gen) (string, []string) {
		a, b, c := g.uuid(), g.uuid(), g.uuid()
		return fmt.Sprintf("{\"id\": \"%s\", \"orgId\": \"%s\", \"sessionId\": \"%s\", \"status\": \"active\"}\n", a, b, c), []string{a, b, c}
	}},
	{id: "etag-checksums", render: func(g *gen) (string, []string) {
		a, b := g.hex(32), g.hex(64)
		return fmt.Sprintf("ETag: W/\"%s\"\nchecksum: %s\n", a, b), []string{a, b}
	}},
}

func (g *gen) positive(f family, c *context) {
	name := pick(g, f.names)
	s := slot{fam: &f, name: name, v: lit(f.value(g))}
	var r rendered
	for try := 0; try < 8 && !r.ok; try++ {
		r = c.render(g, s)
	}
	if !r.ok {
		return
	}
	secrets := append([]string{r.value}, r.more...)
	text, keep := g.surround(r.text, r.keep)
	g.add(Case{Kind: "pos", Family: f.id, Context: c.id, Tags: r.tags, Text: text, Secrets: secrets, Keep: keep})
}

func (g *gen) negative(n negKind, c *context) {
	name, v := n.value(g, c)
	r := c.render(g, slot{name: name, v: v})
	if !r.ok {
		return
	}
	keep := r.keep
	if !r.noKeep {
		keep = append(keep, r.value)
	}
	text, keep := g.surround(r.text, keep)
	g.add(Case{Kind: "neg", Family: "neg-" + n.id, Context: c.id, Tags: r.tags, Text: text, Keep: keep})
}

func (g *gen) lookalike(l lookalike) {
	text, keep := l.render(g)
	text, keep = g.surround(text, keep)
	g.add(Case{Kind: "neg", Family: "lookalike-" + l.id, Context: "output", Text: text, Keep: keep})
}

// surround puts a case's text among lines of an agent session that hold
// non-secrets of their own (ids, digests, paths), kept too.
func (g *gen) surround(text string, keep []string) (string, []string) {
	if g.chance(0.5) {
		return text, keep
	}
	sha, id := g.hex(40), g.uuid()
	before := pick(g, []string{
		fmt.Sprintf("Running `git show %s --stat` in /workspace/app\n", sha[:12]),
		fmt.Sprintf("[tool] read_file path=/srv/app/config/settings.py session=%s\n", id),
		fmt.Sprintf("Build %s finished in 42.1s\n", sha[:8]),
	})
	after := pick(g, []string{"\nExit code: 0\n", "\n(output truncated)\n", "\nAll checks passed.\n"})
	kept := strings.TrimSpace(before)
	return before + text + after, append(keep, kept)
}
