package casegen

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// val is a value put into a context: a literal (quoted as the context
// quotes strings) or, for negatives, an expression of the context's
// language (written as is: os.environ["TOKEN"], var.db_password).
type val struct {
	text string
	expr bool
}

// slot is what a context renders: a name (in words) and its value.
type slot struct {
	fam  *family // nil for a negative
	name string
	v    val
}

// rendered is a context's text: the value as it appears there (the
// secret of a positive, a keep of a negative), other secrets the text
// holds, and strings that must survive.
type rendered struct {
	text   string
	value  string
	more   []string // further secrets (a service-account file's key id)
	keep   []string
	tags   []string
	ok     bool
	noKeep bool // the value is not a keep of a negative (it is transformed beyond recognition)
}

// context is a place a secret appears.
type context struct {
	id string
	// lines: the context can hold a multi-line value.
	lines bool
	// only, if set, restricts the families the context takes.
	only func(f *family) bool
	// positiveOnly: the context splits a secret's value; negatives
	// (references, expressions) are not written there.
	positiveOnly bool
	// render writes the slot; ok false means this slot does not fit.
	render func(g *gen, s slot) rendered
	// ref returns a reference to a secret kept elsewhere, as this
	// context's language writes one; negatives use it.
	ref func(g *gen, name string) val
}

func (c *context) holds(f *family) bool {
	if c.only != nil {
		return c.only(f)
	}
	return !f.multiline || c.lines
}

func ok(text, value string, keep ...string) rendered {
	return rendered{text: text, value: value, keep: keep, ok: true}
}

func lit(v string) val { return val{text: v} }

var benignEnv = []string{"HOME=/home/dev", "SHELL=/bin/bash", "LANG=en_US.UTF-8", "TERM=xterm-256color",
	"PATH=/usr/local/bin:/usr/bin:/bin", "PWD=/workspace/app", "NODE_ENV=production", "LOG_LEVEL=info", "TZ=UTC",
	"PYTHONUNBUFFERED=1", "MAX_TOKENS=4096", "TOKENIZERS_PARALLELISM=false", "HOSTNAME=web-7f9c6d8b5-x2x4q",
	"GIT_COMMIT=3f9c2a1b7e4d5c6f8a9b0c1d2e3f4a5b6c7d8e9f", "PORT=8080", "REGION=eu-west-1"}

// benign returns n lines of a plain environment, and what of them to keep.
func (g *gen) benign(n int) ([]string, []string) {
	perm := g.r.Perm(len(benignEnv))
	var lines, keep []string
	for _, i := range perm[:n] {
		lines = append(lines, benignEnv[i])
		keep = append(keep, benignEnv[i])
	}
	return lines, keep
}

func (g *gen) host() string {
	return pick(g, []string{"api.acme.io", "billing.internal.example.com", "10.0.3.17", "svc-payments.prod.svc.cluster.local", "api.vendor.dev"})
}

func (g *gen) requestID() string { return g.uuid() }

// shellValue writes a literal for a shell assignment.
func shellValue(v val, g *gen) string {
	if v.expr {
		return v.text
	}
	if g.chance(0.3) && !strings.ContainsAny(v.text, `"$`+"`\\!") {
		return `"` + v.text + `"`
	}
	return shellWord(v.text)
}

// codeString writes a literal in a C-like language, or the expression.
func codeString(v val, q byte) string {
	if v.expr {
		return v.text
	}
	return quoted(v.text, q)
}

var contexts = []*context{
	{id: "env-dump", render: func(g *gen, s slot) rendered {
		lines, keep := g.benign(4 + g.r.IntN(4))
		name := envName(s.name)
		at := g.r.IntN(len(lines) + 1)
		lines = append(lines[:at], append([]string{name + "=" + s.v.text}, lines[at:]...)...)
		return ok("$ env | sort\n"+strings.Join(lines, "\n")+"\n", s.v.text, append(keep, name)...)
	}},
	{id: "dotenv", lines: true, render: func(g *gen, s slot) rendered {
		name := envName(s.name)
		v := s.v.text
		switch {
		case strings.Contains(v, "\n"):
			v = `"` + v + `"`
		case s.v.expr:
		case g.chance(0.4):
			v = quoted(v, pick(g, []byte{'"', '\''}))
		case strings.ContainsAny(v, " #\"'$`\\"):
			v = "'" + v + "'"
		}
		text := fmt.Sprintf("# %s\nAPP_ENV=production\nDATABASE_HOST=%s\n%s=%s\nFEATURE_FLAGS=search,billing\n", pick(g, []string{"Service credentials", "copied from the vault", "local overrides", ".env"}), g.host(), name, v)
		return ok(text, s.v.text, name, "FEATURE_FLAGS=search,billing")
	}},
	{id: "dotenv-export", lines: true, render: func(g *gen, s slot) rendered {
		name := envName(s.name)
		v := s.v.text
		if strings.Contains(v, "\n") {
			v = `"` + v + `"`
		} else {
			v = shellValue(s.v, g)
		}
		text := fmt.Sprintf("#!/usr/bin/env bash\n# source me\nexport AWS_REGION=us-east-1\nexport %s=%s\nexport RELEASE=v2.%d.%d\n", name, v, g.r.IntN(20), g.r.IntN(20))
		return ok(text, s.v.text, name, "AWS_REGION=us-east-1")
	}},
	{id: "shell-inline", render: func(g *gen, s slot) rendered {
		name := envName(s.name)
		cmd := pick(g, []string{"./bin/deploy --env prod", "npm run migrate", "python manage.py sync_accounts", "go run ./cmd/worker", "make release"})
		pre := pick(g, []string{"", "env ", "sudo -E "})
		text := fmt.Sprintf("$ %s%s=%s %s\nDeploying revision %s ... done\n", pre, name, shellValue(s.v, g), cmd, g.hex(12))
		return ok(text, s.v.text, name, cmd)
	}},
	{id: "docker-run", render: func(g *gen, s slot) rendered {
		name := envName(s.name)
		flag := pick(g, []string{"-e ", "--env ", "--env="})
		arg := name + "=" + shellValue(s.v, g)
		if g.chance(0.3) && !s.v.expr {
			arg = `"` + name + "=" + s.v.text + `"`
			if strings.ContainsAny(s.v.text, `"$`+"`\\!") {
				arg = "'" + name + "=" + s.v.text + "'"
			}
		}
		text := fmt.Sprintf("docker run --rm -d --name api %s%s -e LOG_LEVEL=debug -p 8080:8080 ghcr.io/acme/api:1.%d.%d\n", flag, arg, g.r.IntN(9), g.r.IntN(9))
		return ok(text, s.v.text, name, "LOG_LEVEL=debug", "ghcr.io/acme/api")
	}},
	{id: "compose", render: func(g *gen, s slot) rendered {
		name := envName(s.name)
		var env string
		if g.chance(0.5) {
			env = "      - " + name + "=" + s.v.text
		} else {
			env = "      " + name + ": " + yamlScalar(s.v.text, pick(g, []byte{0, '"', '\''}))
		}
		text := fmt.Sprintf("services:\n  api:\n    image: acme/api:latest\n    environment:\n%s\n      - LOG_LEVEL=info\n    ports:\n      - \"8080:8080\"\n", env)
		return ok(text, s.v.text, name, "acme/api:latest", "LOG_LEVEL=info")
	}},
	{id: "yaml", lines: true, render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, snake, camel, kebab)
		var v string
		if strings.Contains(s.v.text, "\n") {
			v = "|\n" + indent(s.v.text, "      ")
		} else {
			v = yamlScalar(s.v.text, pick(g, []byte{0, 0, '"', '\''}))
		}
		text := fmt.Sprintf("# config/%s.yaml\n%s:\n  endpoint: https://%s/v1\n  timeout: 30s\n  %s:\n    %s: %s\n    retries: 3\n",
			pick(g, []string{"production", "settings", "app"}), pick(g, []string{"service", "integrations", "billing"}), g.host(), pick(g, []string{"auth", "credentials", "client"}), key, v)
		return ok(text, strings.ReplaceAll(s.v.text, "\n", "\n      "), key+":", "retries: 3")
	}},
	{id: "toml", lines: true, render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, snake, kebab)
		v := `"` + s.v.text + `"`
		switch {
		case strings.Contains(s.v.text, "\n"):
			v = `"""` + "\n" + s.v.text + `"""`
		case s.v.expr:
			v = s.v.text
		case g.chance(0.3):
			v = "'" + s.v.text + "'"
		}
		text := fmt.Sprintf("[%s]\nurl = \"https://%s\"\n%s = %s\nmax_connections = %d\n", pick(g, []string{"database", "service.auth", "tool.acme", "providers.openai"}), g.host(), key, v, 5+g.r.IntN(50))
		return ok(text, s.v.text, key+" = ")
	}},
	{id: "ini", render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, snake, camel, pascal)
		sep := pick(g, []string{" = ", "=", ": "})
		text := fmt.Sprintf("[%s]\nhost = %s\nport = %d\n%s%s%s\nssl = true\n", pick(g, []string{"database", "client", "mysql", "credentials", "default"}), g.host(), 3306+g.r.IntN(3000), key, sep, s.v.text)
		return ok(text, s.v.text, key, "ssl = true")
	}},
	{id: "properties", render: func(g *gen, s slot) rendered {
		key := pick(g, []string{"spring.datasource.", "app.integration.", "acme.client.", "quarkus.oidc.credentials."}) + g.styled(s.name, kebab, camel, dotted)
		text := fmt.Sprintf("server.port=8080\n%s=%s\nlogging.level.root=INFO\n", key, s.v.text)
		return ok(text, s.v.text, key, "logging.level.root=INFO")
	}},
	{id: "json", lines: true, render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, camel, snake)
		v := jsonString(s.v.text)
		if s.v.expr {
			v = jsonString(s.v.text)
		}
		var text string
		if g.chance(0.5) {
			text = fmt.Sprintf("{\n  \"name\": \"%s\",\n  \"config\": {\n    \"endpoint\": \"https://%s/v2\",\n    \"%s\": %s,\n    \"timeoutMs\": %d\n  }\n}\n", pick(g, []string{"billing-sync", "crawler", "acme-bot"}), g.host(), key, v, 1000*(1+g.r.IntN(30)))
		} else {
			text = fmt.Sprintf(`{"id":"%s","settings":{"provider":{"%s":%s,"region":"eu-west-1"}},"enabled":true}`+"\n", g.uuid(), key, v)
		}
		return ok(text, jsonInner(s.v.text), `"`+key+`"`)
	}},
	{id: "json-in-json", lines: true, render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, camel, snake)
		inner := fmt.Sprintf(`{"%s": %s, "endpoint": "https://%s"}`, key, jsonString(s.v.text), g.host())
		if g.chance(0.5) {
			inner = envName(s.name) + "=" + s.v.text + "\nLOG_LEVEL=info\n"
			if strings.Contains(s.v.text, "\n") {
				inner = envName(s.name) + "=\"" + s.v.text + "\"\n"
			}
		}
		call := g.random(24, alnum)
		text := fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01%s","content":%s}]}}`+"\n", call, jsonString(inner))
		form := jsonInner(s.v.text)
		if strings.HasPrefix(inner, "{") {
			form = jsonInner(jsonInner(s.v.text))
		}
		return ok(text, form, "toolu_01"+call)
	}},
	{id: "json-ensure-ascii", render: func(g *gen, s slot) rendered {
		// Python's json.dumps escapes non-ASCII characters: the value
		// follows a \uXXXX escape directly.
		quotes := pick(g, [][2]string{{"“", "”"}, {"«", "»"}, {"→ ", ""}, {"\u00a0", "\u00a0"}, {"é ", ""}})
		open, close := quotes[0], quotes[1]
		var msg string
		if s.fam != nil && s.fam.shaped {
			msg = fmt.Sprintf("Voilà la clé %s%s%s — café prêt", open, s.v.text, close)
		} else {
			// Only its name says the value is secret: typographic quotes
			// around it, as a formatter would print them.
			quotes = pick(g, [][2]string{{"“", "”"}, {"«", "»"}, {"‘", "’"}})
			msg = fmt.Sprintf("Résumé → %s=%s%s%s", envName(s.name), quotes[0], s.v.text, quotes[1])
		}
		doc := asciiJSON(fmt.Sprintf(`{"role": "tool", "content": %s, "status": "ok"}`, jsonString(msg)))
		return ok(doc+"\n", asciiJSON(jsonInner(s.v.text)), `"status": "ok"`)
	}},
	{id: "python", lines: true, ref: func(g *gen, name string) val {
		return val{text: pick(g, []string{`os.environ["` + envName(name) + `"]`, `os.getenv("` + envName(name) + `")`, "settings." + upperSnake(name)}), expr: true}
	}, render: func(g *gen, s slot) rendered {
		q := g.pyQuote()
		v := codeString(s.v, q)
		if strings.Contains(s.v.text, "\n") {
			v = `"""` + s.v.text + "\n" + `"""`
		}
		switch g.r.IntN(5) {
		case 0:
			n := upperSnake(s.name)
			return ok(fmt.Sprintf("import os\n\n%s = %s\nTIMEOUT = 30\n", n, v), s.v.text, n, "TIMEOUT = 30")
		case 1:
			n := snake(s.name)
			return ok(fmt.Sprintf("client = acme.Client(\n    base_url=\"https://%s\",\n    %s=%s,\n)\n", g.host(), n, v), s.v.text, n+"=")
		case 2:
			n := envName(s.name)
			return ok(fmt.Sprintf("os.environ[\"%s\"] = %s\nmain()\n", n, v), s.v.text, n)
		case 3:
			n := snake(s.name)
			return ok(fmt.Sprintf("CONFIG = {\n    \"region\": \"us-east-1\",\n    \"%s\": %s,\n}\n", n, v), s.v.text, `"`+n+`"`)
		}
		n := snake(s.name)
		return ok(fmt.Sprintf("class Settings:\n    def __init__(self):\n        self.%s = %s\n        self.debug = False\n", n, v), s.v.text, "self."+n)
	}},
	{id: "javascript", lines: true, ref: func(g *gen, name string) val {
		return val{text: pick(g, []string{"process.env." + envName(name), "import.meta.env.VITE_" + envName(name), "config.get('" + camel(name) + "')"}), expr: true}
	}, render: func(g *gen, s slot) rendered {
		q := pick(g, []byte{'"', '\'', '`'})
		v := codeString(s.v, q)
		if strings.Contains(s.v.text, "\n") {
			v = "`" + s.v.text + "`"
		}
		switch g.r.IntN(4) {
		case 0:
			n := camel(s.name)
			return ok(fmt.Sprintf("const %s = %s;\nconst client = new Client({ %s });\n", n, v, n), s.v.text, "const "+n)
		case 1:
			n := envName(s.name)
			return ok(fmt.Sprintf("process.env.%s = %s;\nawait start();\n", n, v), s.v.text, "process.env."+n)
		case 2:
			n := camel(s.name)
			return ok(fmt.Sprintf("export default {\n  region: 'us-east-1',\n  %s: %s,\n  retries: 2,\n};\n", n, v), s.v.text, n+":")
		}
		return ok(fmt.Sprintf("const api = axios.create({\n  baseURL: 'https://%s',\n  headers: { '%s': %s },\n});\n", g.host(), header(s.name), v), s.v.text, "baseURL", header(s.name)+"'")
	}},
	{id: "go", lines: true, ref: func(g *gen, name string) val {
		return val{text: `os.Getenv("` + envName(name) + `")`, expr: true}
	}, render: func(g *gen, s slot) rendered {
		v := codeString(s.v, '"')
		if strings.Contains(s.v.text, "\n") {
			v = "`" + s.v.text + "`"
		}
		switch g.r.IntN(4) {
		case 0:
			n := goCamel(s.name)
			return ok(fmt.Sprintf("const %s = %s\n\nfunc main() {\n\trun(%s)\n}\n", n, v, n), s.v.text, "const "+n)
		case 1:
			n := goExported(s.name)
			return ok(fmt.Sprintf("cfg := acme.Config{\n\tEndpoint: \"https://%s\",\n\t%s: %s,\n}\n", g.host(), n, v), s.v.text, n+":")
		case 2:
			n := envName(s.name)
			return ok(fmt.Sprintf("if err := os.Setenv(\"%s\", %s); err != nil {\n\tlog.Fatal(err)\n}\n", n, v), s.v.text, n)
		}
		n := goCamel(s.name)
		if s.fam != nil && len(s.fam.headers) > 0 && !s.v.expr {
			h := pick(g, s.fam.headers)
			hv := s.v.text
			if s.fam.scheme != "" && h == "Authorization" {
				hv = s.fam.scheme + " " + hv
			}
			return ok(fmt.Sprintf("req.Header.Set(\"%s\", \"%s\")\nresp, err := http.DefaultClient.Do(req)\n", h, hv), s.v.text, h)
		}
		return ok(fmt.Sprintf("var %s = %s // TODO: move to config\n", n, v), s.v.text, "var "+n)
	}},
	{id: "ruby", lines: true, ref: func(g *gen, name string) val {
		return val{text: pick(g, []string{`ENV["` + envName(name) + `"]`, `ENV.fetch("` + envName(name) + `")`, "Rails.application.credentials." + snake(name)}), expr: true}
	}, render: func(g *gen, s slot) rendered {
		q := pick(g, []byte{'"', '\''})
		v := codeString(s.v, q)
		if strings.Contains(s.v.text, "\n") {
			v = "<<~KEY\n" + indent(s.v.text, "  ") + "\n  KEY"
		}
		form := strings.ReplaceAll(s.v.text, "\n", "\n  ")
		n := snake(s.name)
		switch g.r.IntN(4) {
		case 0:
			return ok(fmt.Sprintf("Acme.configure do |config|\n  config.%s = %s\n  config.timeout = 10\nend\n", n, v), form, "config."+n)
		case 1:
			e := envName(s.name)
			return ok(fmt.Sprintf("ENV['%s'] = %s\n", e, v), form, e)
		case 2:
			return ok(fmt.Sprintf("client = Acme::Client.new(%s: %s, region: 'eu-west-1')\n", n, v), form, n+":")
		}
		return ok(fmt.Sprintf("SETTINGS = { :%s => %s, :retries => 3 }\n", n, v), form, ":"+n)
	}},
	{id: "shell-script", lines: true, ref: func(g *gen, name string) val {
		return val{text: pick(g, []string{`"$(cat /run/secrets/` + snake(name) + `)"`, `"$(vault kv get -field=` + snake(name) + ` secret/app)"`, `"${` + envName(name) + `:?}"`}), expr: true}
	}, render: func(g *gen, s slot) rendered {
		n := envName(s.name)
		if strings.Contains(s.v.text, "\n") {
			text := fmt.Sprintf("#!/bin/sh\nmkdir -p ~/.ssh\ncat > ~/.ssh/id_deploy <<'EOF'\n%s\nEOF\nchmod 600 ~/.ssh/id_deploy\n", s.v.text)
			return ok(text, s.v.text, "chmod 600 ~/.ssh/id_deploy")
		}
		text := fmt.Sprintf("#!/usr/bin/env bash\nset -euo pipefail\n%s=%s\ncurl -fsS \"https://%s/v1/sync\" -o out.json\n", n, shellValue(s.v, g), g.host())
		return ok(text, s.v.text, n, "set -euo pipefail")
	}},
	{id: "cli-flag", render: func(g *gen, s slot) rendered {
		flag := "--" + kebab(s.name)
		if s.fam != nil && len(s.fam.flags) > 0 && g.chance(0.5) {
			flag = pick(g, s.fam.flags)
		}
		v := shellValue(s.v, g)
		tool := pick(g, []string{"acme-cli login", "./deploy.sh", "terraform-provider-acme configure", "svcctl connect", "python sync.py"})
		var arg string
		switch {
		case flag == "-p" && s.fam != nil && strings.HasPrefix(s.fam.id, "password"):
			t := pick(g, []string{"mysql -h db.internal -u root -p%s app", "docker login -u deploy -p %s registry.acme.io", "sshpass -p %s ssh deploy@10.0.0.5", "redis-cli -h cache.internal -a %s ping"})
			if strings.HasPrefix(t, "mysql") {
				return ok(strings.Replace(t, "%s", v, 1)+"\n", s.v.text, "db.internal")
			}
			return ok(fmt.Sprintf(t, v)+"\n", s.v.text)
		case g.chance(0.5) && !s.v.expr:
			arg = flag + "=" + v
		default:
			arg = flag + " " + v
		}
		return ok(fmt.Sprintf("$ %s --region eu-west-1 %s --verbose\n", tool, arg), s.v.text, flag, "--region eu-west-1")
	}},
	{id: "curl-header", render: func(g *gen, s slot) rendered {
		h, hv := headerFor(g, s)
		q := pick(g, []string{`"`, `'`})
		if strings.ContainsAny(hv, `"$`+"`\\!") {
			q = "'"
		}
		text := fmt.Sprintf("$ curl -sS -X %s https://%s/v1/%s \\\n    -H %s%s: %s%s \\\n    -H 'Content-Type: application/json' \\\n    -d '{\"limit\": 10}'\n",
			pick(g, []string{"GET", "POST"}), g.host(), pick(g, []string{"items", "accounts", "jobs"}), q, h, hv, q)
		return ok(text, s.v.text, h+":", "Content-Type: application/json")
	}},
	{id: "http-request", render: func(g *gen, s slot) rendered {
		h, hv := headerFor(g, s)
		text := fmt.Sprintf("> POST /v2/events HTTP/1.1\n> Host: %s\n> User-Agent: acme-sdk/4.2.0\n> %s: %s\n> Content-Type: application/json\n> X-Request-Id: %s\n>\n< HTTP/1.1 202 Accepted\n",
			g.host(), h, hv, g.requestID())
		return ok(text, s.v.text, h+":", "User-Agent: acme-sdk/4.2.0")
	}},
	{id: "url-query", render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, snake, camel)
		if s.fam != nil && !strings.HasPrefix(s.fam.id, "password") && g.chance(0.3) {
			key = pick(g, []string{"access_token", "api_key", "apikey", "token", "key", "auth", "sig", "client_secret"})
		}
		v := queryEscape(s.v.text)
		if s.v.expr {
			v = s.v.text
		}
		u := fmt.Sprintf("https://%s/v2/%s?%s=%s&limit=%d", g.host(), pick(g, []string{"search", "reports/export", "events"}), key, v, 10+g.r.IntN(90))
		text := pick(g, []string{"GET %s -> 200 (%d ms)\n", "Fetching %s (attempt %d)\n", "requests.get(\"%s\", timeout=%d)\n"})
		return ok(fmt.Sprintf(text, u, 1+g.r.IntN(400)), v, "&limit=", key+"=")
	}},
	{id: "k8s-secret", lines: true, render: func(g *gen, s slot) rendered {
		key := g.styled(s.name, kebab, snake, camel)
		name := pick(g, []string{"app-secrets", "api-credentials", "db-auth"})
		if s.fam == nil || g.chance(0.25) {
			v := s.v.text
			if strings.Contains(v, "\n") {
				v = "|\n" + indent(v, "    ")
			} else {
				v = yamlScalar(v, pick(g, []byte{0, '"'}))
			}
			text := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: prod\ntype: Opaque\nstringData:\n  %s: %s\n", name, key, v)
			return ok(text, strings.ReplaceAll(s.v.text, "\n", "\n    "), "name: "+name, key+":")
		}
		enc := base64.StdEncoding.EncodeToString([]byte(s.v.text))
		if g.chance(0.3) {
			text := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"%s","namespace":"prod"},"type":"Opaque","data":{"%s":"%s"}}`+"\n", name, key, enc)
			r := ok(text, enc, `"name":"`+name+`"`, `"`+key+`"`)
			r.tags = []string{"base64"}
			return r
		}
		text := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: prod\ntype: Opaque\ndata:\n  %s: %s\n  region: %s\n", name, key, enc, base64.StdEncoding.EncodeToString([]byte("eu-west-1")))
		r := ok(text, enc, "name: "+name, key+":")
		r.tags = []string{"base64"}
		return r
	}},
	{id: "terraform", lines: true, ref: func(g *gen, name string) val {
		return val{text: pick(g, []string{"var." + snake(name), "data.aws_secretsmanager_secret_version." + snake(name) + ".secret_string", "local." + snake(name)}), expr: true}
	}, render: func(g *gen, s slot) rendered {
		n := snake(s.name)
		v := codeString(s.v, '"')
		if strings.Contains(s.v.text, "\n") {
			v = "<<-EOT\n" + s.v.text + "\nEOT"
		}
		switch g.r.IntN(3) {
		case 0:
			return ok(fmt.Sprintf("variable \"%s\" {\n  type      = string\n  sensitive = true\n  default   = %s\n}\n", n, v), s.v.text, "sensitive = true", `variable "`+n+`"`)
		case 1:
			return ok(fmt.Sprintf("provider \"acme\" {\n  endpoint = \"https://%s\"\n  %s = %s\n}\n", g.host(), n, v), s.v.text, "provider \"acme\"", n)
		}
		return ok(fmt.Sprintf("resource \"acme_integration\" \"main\" {\n  name   = \"billing\"\n  %s = %s\n  region = \"eu-west-1\"\n}\n", n, v), s.v.text, `name   = "billing"`, n)
	}},
	{id: "connection-string", only: func(f *family) bool { return !f.multiline }, render: func(g *gen, s slot) rendered {
		user := pick(g, []string{"app_user", "admin", "svc_deploy", "orders_rw", "default"})
		db := pick(g, []string{"orders", "app_production", "analytics"})
		pw := s.v.text
		raw := g.chance(0.5) // as people write them, unencoded
		if !raw && !s.v.expr {
			pw = userinfoEscape(s.v.text)
		}
		var text string
		switch g.r.IntN(7) {
		case 0:
			text = fmt.Sprintf("DATABASE_URL=postgres://%s:%s@db-prod-1.internal:5432/%s?sslmode=require\n", user, pw, db)
		case 1:
			text = fmt.Sprintf("mongodb+srv://%s:%s@cluster0.ab1cd.mongodb.net/%s?retryWrites=true&w=majority\n", user, pw, db)
		case 2:
			text = fmt.Sprintf("REDIS_URL=redis://:%s@cache.internal:6379/0\n", pw)
			user, db = "", "cache.internal"
		case 3:
			text = fmt.Sprintf("  \"connectionString\": \"Server=tcp:%s.database.windows.net,1433;Database=%s;User ID=%s;Password=%s;Encrypt=True;\"\n", db, db, user, s.v.text)
			pw = s.v.text
		case 4:
			text = fmt.Sprintf("jdbc:postgresql://db.internal:5432/%s?user=%s&password=%s&ssl=true\n", db, user, queryEscape(s.v.text))
			pw = queryEscape(s.v.text)
		case 5:
			text = fmt.Sprintf("git clone https://%s:%s@github.com/acme/%s.git\n", pick(g, []string{"x-access-token", "oauth2", "deploy-bot"}), pw, db)
			user = ""
		default:
			text = fmt.Sprintf("amqp://%s:%s@rabbitmq.internal:5672/%s\n", user, pw, db)
		}
		keep := []string{db}
		if user != "" {
			keep = append(keep, user)
		}
		return ok(text, pw, keep...)
	}},
	{id: "service-account", lines: true, only: func(f *family) bool {
		return f.multiline || strings.Contains(f.id, "secret") || f.id == "aws-secret-access-key" || f.id == "generic-token"
	}, render: func(g *gen, s slot) rendered {
		project := pick(g, []string{"acme-prod", "billing-staging-4821", "data-platform"})
		switch {
		case s.fam != nil && s.fam.multiline:
			kid := g.hex(40)
			doc := fmt.Sprintf("{\n  \"type\": \"service_account\",\n  \"project_id\": \"%s\",\n  \"private_key_id\": \"%s\",\n  \"private_key\": %s,\n  \"client_email\": \"deployer@%s.iam.gserviceaccount.com\",\n  \"client_id\": \"%s\",\n  \"token_uri\": \"https://oauth2.googleapis.com/token\"\n}\n",
				project, kid, jsonString(s.v.text+"\n"), project, "1"+g.rs(20, digits))
			r := ok(doc, jsonInner(s.v.text), "deployer@"+project+".iam.gserviceaccount.com", `"token_uri"`)
			r.more = []string{kid}
			return r
		case s.fam != nil && s.fam.id == "aws-secret-access-key":
			id := "AKIA" + g.random(16, b32)
			text := fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\nregion = us-east-1\n", id, s.v.text)
			r := ok(text, s.v.text, "region = us-east-1")
			r.more = []string{id}
			return r
		case g.chance(0.5):
			doc := fmt.Sprintf(`{"installed":{"client_id":"%d-%s.apps.googleusercontent.com","project_id":"%s","auth_uri":"https://accounts.google.com/o/oauth2/auth","client_secret":%s,"redirect_uris":["http://localhost"]}}`+"\n",
				g.r.Int64N(1e12), g.random(32, lower+digits), project, jsonString(s.v.text))
			return ok(doc, jsonInner(s.v.text), project, "apps.googleusercontent.com")
		}
		doc := fmt.Sprintf("{\n  \"clientId\": \"%s\",\n  \"clientSecret\": %s,\n  \"subscriptionId\": \"%s\",\n  \"tenantId\": \"%s\",\n  \"activeDirectoryEndpointUrl\": \"https://login.microsoftonline.com\"\n}\n",
			g.uuid(), jsonString(s.v.text), g.uuid(), g.uuid())
		return ok(doc, jsonInner(s.v.text), `"clientId"`, "login.microsoftonline.com")
	}},
	{id: "log-line", render: func(g *gen, s slot) rendered {
		ts := fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02d.%03dZ", 1+g.r.IntN(12), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1000))
		rid := g.requestID()
		switch g.r.IntN(4) {
		case 0:
			n := snake(s.name)
			return ok(fmt.Sprintf("%s INFO  [auth] loaded %s=%s tenant=42 request_id=%s\n", ts, n, s.v.text, rid), s.v.text, n+"=", rid)
		case 1:
			h, hv := headerFor(g, s)
			return ok(fmt.Sprintf("%s DEBUG http: request headers {'%s': '%s', 'User-Agent': 'python-requests/2.31'} request_id=%s\n", ts, h, hv, rid), s.v.text, "python-requests/2.31", rid)
		case 2:
			n := envName(s.name)
			return ok(fmt.Sprintf("time=%s level=debug msg=\"starting worker\" %s=%s pid=%d\n", ts, n, s.v.text, 1000+g.r.IntN(9000)), s.v.text, "starting worker", n)
		}
		n := camel(s.name)
		return ok(fmt.Sprintf("[%s] WARN config: using %s: \"%s\" from defaults (request %s)\n", ts, n, s.v.text, rid), s.v.text, rid)
	}},
	{id: "secret-command", render: func(g *gen, s slot) rendered {
		e := envName(s.name)
		v := shellValue(s.v, g)
		var text string
		switch g.r.IntN(8) {
		case 0:
			text = fmt.Sprintf("$ gh secret set %s --body %s --repo acme/api\n✓ Set Actions secret %s for acme/api\n", e, v, e)
		case 1:
			text = fmt.Sprintf("$ kubectl create secret generic app-secrets --from-literal=%s=%s -n prod\nsecret/app-secrets created\n", kebab(s.name), v)
			e = kebab(s.name)
		case 2:
			text = fmt.Sprintf("$ heroku config:set %s=%s -a acme-api\nSetting %s and restarting acme-api... done, v%d\n", e, v, e, 10+g.r.IntN(200))
		case 3:
			text = fmt.Sprintf("$ fly secrets set %s=%s\nUpdating existing machines in 'acme-api' with rolling strategy\n", e, v)
		case 4:
			text = fmt.Sprintf("$ vault kv put secret/acme/api %s=%s\n====== Secret Path ======\nsecret/data/acme/api\n", snake(s.name), v)
			e = snake(s.name)
		case 5:
			text = fmt.Sprintf("$ aws ssm put-parameter --name /prod/api/%s --type SecureString --value %s --overwrite\n{\n    \"Version\": %d,\n    \"Tier\": \"Standard\"\n}\n", snake(s.name), v, 1+g.r.IntN(9))
			e = "/prod/api/" + snake(s.name)
		case 6:
			text = fmt.Sprintf("$ doppler secrets set %s=%s --project api --config prd\n", e, v)
		default:
			text = fmt.Sprintf("$ az keyvault secret set --vault-name acme-kv --name %s --value %s\n", kebab(s.name), v)
			e = kebab(s.name)
		}
		return ok(text, s.v.text, e)
	}},
	{id: "base64-wrapped", render: func(g *gen, s slot) rendered {
		// A setting base64-encoded, as .env files are passed to CI or
		// decoded by a script: the whole encoding hides the secret.
		env := fmt.Sprintf("%s=%s\nLOG_LEVEL=info\n", envName(s.name), s.v.text)
		enc := base64.StdEncoding.EncodeToString([]byte(env))
		text := fmt.Sprintf("$ echo %s | base64 -d >> .env\n$ source .env && ./run.sh\n", enc)
		r := ok(text, enc, "./run.sh")
		r.tags = []string{"base64"}
		r.noKeep = true
		return r
	}},
	{id: "percent-encoded", render: func(g *gen, s slot) rendered {
		// A form or a redirect state carrying a setting, percent-encoded
		// as a whole: "NAME=value" is one parameter's value.
		inner := fmt.Sprintf("%s=%s&env=prod", snake(s.name), queryEscape(s.v.text))
		enc := queryEscape(inner)
		text := fmt.Sprintf("GET https://%s/oauth/callback?code=%s&state=%s HTTP/1.1\n", g.host(), g.random(20, alnum), enc)
		form := queryEscape(queryEscape(s.v.text))
		r := ok(text, form, "/oauth/callback")
		r.tags = []string{"percent"}
		r.noKeep = true
		return r
	}},
	{id: "split-line", positiveOnly: true, only: splittable, render: func(g *gen, s slot) rendered {
		// A key wrapped by a terminal or an editor inside its quotes.
		v := s.v.text
		cut := splitAt(g, v)
		n := snake(s.name)
		text := fmt.Sprintf("%s = \"%s\n    %s\"\nretries = 3\n", n, v[:cut], v[cut:])
		return rendered{text: text, value: v[:cut], more: []string{v[cut:]}, keep: []string{"retries = 3"}, ok: true, tags: []string{"split"}}
	}},
	{id: "split-line-crlf", positiveOnly: true, only: splittable, render: func(g *gen, s slot) rendered {
		// The same in a Windows file, where every line ends in CR LF, or
		// wrapped at a lone CR.
		v := s.v.text
		cut := splitAt(g, v)
		brk := pick(g, []string{"\r\n", "\r\n", "\r"})
		n := pick(g, []string{snake(s.name), envName(s.name), camel(s.name)})
		text := fmt.Sprintf("[service]\r\n%s = '%s%s  %s'\r\nretries = 3\r\n", n, v[:cut], brk, v[cut:])
		return rendered{text: text, value: v[:cut], more: []string{v[cut:]}, keep: []string{"retries = 3\r\n", "[service]\r\n"}, ok: true, tags: []string{"split", "crlf"}}
	}},
	{id: "split-line-json", positiveOnly: true, only: splittable, render: func(g *gen, s slot) rendered {
		// A wrapped key saved in JSON (a tool's output, a pasted
		// config): the break is an escape in the string, \n or \r\n.
		v := s.v.text
		cut := splitAt(g, v)
		brk := pick(g, []string{`\n`, `\r\n`, `\r\n    `})
		a, b := jsonInner(v[:cut]), jsonInner(v[cut:])
		text := fmt.Sprintf("{\"service\": \"billing\", \"%s\": \"%s%s%s\", \"retries\": 3}", camel(s.name), a, brk, b)
		if g.chance(0.4) {
			// The same JSON inside a JSON string (a tool's output in a
			// transcript): the escapes are escaped once more.
			text, a, b = jsonString(text), jsonInner(a), jsonInner(b)
			return rendered{text: fmt.Sprintf("{\"tool_output\": %s}\n", text), value: a, more: []string{b}, keep: []string{`\"retries\": 3`, `"tool_output"`}, ok: true, tags: []string{"split", "json", "json-in-json"}}
		}
		return rendered{text: text + "\n", value: a, more: []string{b}, keep: []string{`"retries": 3`, `"service": "billing"`}, ok: true, tags: []string{"split", "json"}}
	}},
	{id: "xml", render: func(g *gen, s slot) rendered {
		switch g.r.IntN(3) {
		case 0:
			n := pascal(s.name)
			return ok(fmt.Sprintf("<appSettings>\n  <add key=\"Environment\" value=\"Production\" />\n  <add key=\"%s\" value=\"%s\" />\n</appSettings>\n", n, s.v.text), s.v.text, n, `value="Production"`)
		case 1:
			n := camel(s.name)
			return ok(fmt.Sprintf("<configuration>\n  <endpoint>https://%s</endpoint>\n  <%s>%s</%s>\n</configuration>\n", g.host(), n, s.v.text, n), s.v.text, "<"+n+">")
		}
		n := dotted(s.name)
		return ok(fmt.Sprintf("<property name=\"%s\" value=\"%s\"/>\n<property name=\"pool.size\" value=\"10\"/>\n", n, s.v.text), s.v.text, n, `value="10"`)
	}},
}

// headerFor picks the header carrying a slot's value, and the value as
// written (with its scheme).
func headerFor(g *gen, s slot) (string, string) {
	if s.fam != nil && len(s.fam.headers) > 0 && g.chance(0.6) {
		h := pick(g, s.fam.headers)
		if h == "Authorization" && s.fam.scheme != "" {
			return h, s.fam.scheme + " " + s.v.text
		}
		return h, s.v.text
	}
	token := s.fam != nil && !strings.HasPrefix(s.fam.id, "password")
	switch g.r.IntN(4) {
	case 0:
		if token {
			return "Authorization", "Bearer " + s.v.text
		}
	case 1:
		if token {
			return pick(g, []string{"X-Api-Key", "Api-Key", "X-Auth-Token", "X-Access-Token", "apikey"}), s.v.text
		}
	}
	// A custom header after the name: X-Acme-Api-Key, Acme-Token.
	h := header(s.name)
	if g.chance(0.6) {
		h = "X-" + h
	}
	return h, s.v.text
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// splittable families are those a split context takes: one-line values
// of a recognisable shape (a password cut in two is two words).
func splittable(f *family) bool { return !f.multiline && f.shaped }

// splitAt picks where a wrap cuts v: in its middle third.
func splitAt(g *gen, v string) int { return len(v)/3 + g.r.IntN(len(v)/3+1) }
