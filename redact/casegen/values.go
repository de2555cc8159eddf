package casegen

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"strings"
)

// Alphabets of random values.
const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
	alnum  = lower + upper + digits
	hexl   = "0123456789abcdef"
	b64    = alnum + "+/"
	b64url = alnum + "-_"
	b32    = upper + "234567"
	bech32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
	b62    = digits + upper + lower
)

func (g *gen) rs(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// random draws a value of n bytes from alphabet that has the variety of a
// real random token: at least one byte of each class the alphabet has, so
// that "all lowercase by chance" never makes a token look like a word.
func (g *gen) random(n int, alphabet string) string {
	for {
		s := g.rs(n, alphabet)
		if n < 12 || hasClassesOf(s, alphabet) {
			return s
		}
	}
}

func hasClassesOf(s, alphabet string) bool {
	for _, class := range []string{lower, upper, digits} {
		if strings.ContainsAny(alphabet, class) && !strings.ContainsAny(s, class) {
			return false
		}
	}
	return true
}

func (g *gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g *gen) uuid() string {
	b := g.bytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (g *gen) hex(n int) string { return g.random(n, hexl) }

func base62(n uint32, width int) string {
	var b []byte
	for n > 0 {
		b = append([]byte{b62[n%62]}, b...)
		n /= 62
	}
	for len(b) < width {
		b = append([]byte{'0'}, b...)
	}
	return string(b)
}

// crcToken is the GitHub (2021) and npm format: 30 random base62 bytes and
// the CRC32 of them in 6 base62 digits.
func (g *gen) crcToken(prefix string) string {
	body := g.random(30, alnum)
	return prefix + body + base62(crc32.ChecksumIEEE([]byte(body)), 6)
}

func (g *gen) jwt() string {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(pick(g, []string{`{"alg":"HS256","typ":"JWT"}`, `{"alg":"RS256","typ":"JWT","kid":"` + g.hex(16) + `"}`})))
	payload := enc([]byte(fmt.Sprintf(`{"sub":"%d","name":"%s","iat":%d,"exp":%d,"scope":"read write"}`,
		g.r.IntN(1e9), pick(g, []string{"svc-deploy", "alice", "ci-bot", "billing"}), 1700000000+g.r.IntN(1e7), 1800000000+g.r.IntN(1e7))))
	return header + "." + payload + "." + enc(g.bytes(32))
}

// pem returns a PEM block of kind ("RSA PRIVATE KEY", "PRIVATE KEY", ...).
func (g *gen) pem(kind string, n int) string {
	body := base64.StdEncoding.EncodeToString(g.bytes(n))
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n-----END " + kind + "-----")
	return b.String()
}

var passwordWords = []string{"Summer", "Falcon", "Monkey", "Dragon", "Sunshine", "Tiger", "Rocket", "Bluebird", "Orange",
	"Harbor", "Cobalt", "Maple", "Granite", "Velvet", "Zephyr", "Quartz", "Willow", "Ember", "Nimbus", "Saffron"}

// humanPassword is a password a person chose: words, digits, a symbol.
func (g *gen) humanPassword() string {
	w := pick(g, passwordWords)
	switch g.r.IntN(4) {
	case 0:
		return w + fmt.Sprint(1990+g.r.IntN(36)) + pick(g, []string{"!", "#", "$", "@", "?", "*"})
	case 1:
		return strings.ToLower(w) + pick(g, []string{"_", ".", "-"}) + strings.ToLower(pick(g, passwordWords)) + fmt.Sprint(10+g.r.IntN(90))
	case 2:
		return strings.NewReplacer("a", "4", "e", "3", "o", "0", "i", "1").Replace(w) + pick(g, []string{"&", "%", "!"}) + fmt.Sprint(g.r.IntN(1000))
	}
	return w + pick(g, passwordWords) + fmt.Sprint(g.r.IntN(100)) + pick(g, []string{"!", "#"})
}

// strongPassword is a generated password: symbols included, among them
// the ones that break URLs (# / ? ( [ < > @ :) when urlHostile is set.
func (g *gen) strongPassword(urlHostile bool) string {
	sym := "!$%^&*-_=+.~"
	if urlHostile {
		sym = "#/?([<>)]!$%"
	}
	n := 14 + g.r.IntN(10)
	for {
		b := []byte(g.random(n, alnum))
		for k := 0; k < 2+g.r.IntN(3); k++ {
			b[1+g.r.IntN(n-2)] = sym[g.r.IntN(len(sym))]
		}
		s := string(b)
		if hasClassesOf(s, alnum) {
			return s
		}
	}
}

// family is a kind of secret: how its values look, and the names it goes
// by.
type family struct {
	id    string
	value func(g *gen) string
	// names are the family's usual names, as words ("openai api key"); a
	// context spells them in its own style.
	names []string
	// header names a request header that carries it ("Authorization:
	// Bearer" is the header Authorization with the scheme Bearer).
	headers []string
	scheme  string
	// shaped: the value has a vendor's shape (a prefix, a checksum, a
	// structure); otherwise only its context says it is secret.
	shaped bool
	// multiline: the value spans lines (PEM): only contexts that can hold
	// lines carry it.
	multiline bool
	// flag is the command-line flag of a tool that takes it, if any.
	flags []string
}

var families = []family{
	{id: "openai-api-key", shaped: true, names: []string{"openai api key", "openai key", "llm api key"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string {
			return "sk-proj-" + g.random(20+g.r.IntN(40), b64url) + "T3BlbkFJ" + g.random(20+g.r.IntN(40), b64url)
		}},
	{id: "anthropic-api-key", shaped: true, names: []string{"anthropic api key", "claude api key"}, headers: []string{"x-api-key"},
		value: func(g *gen) string { return "sk-ant-api03-" + g.random(93, b64url) + "AA" }},
	{id: "github-token", shaped: true, names: []string{"github token", "gh token", "github pat", "git token"}, headers: []string{"Authorization"}, scheme: "token",
		value: func(g *gen) string { return g.crcToken(pick(g, []string{"ghp_", "gho_", "ghs_"})) }},
	{id: "github-fine-grained-pat", shaped: true, names: []string{"github token", "gh pat"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "github_pat_" + g.random(22, alnum) + "_" + g.random(59, alnum) }},
	{id: "gitlab-token", shaped: true, names: []string{"gitlab token", "gitlab private token", "ci job token"}, headers: []string{"PRIVATE-TOKEN"},
		value: func(g *gen) string { return "glpat-" + g.random(20, b64url) }},
	{id: "aws-access-key-id", shaped: true, names: []string{"aws access key id"}, flags: []string{"--aws-access-key-id"},
		value: func(g *gen) string { return pick(g, []string{"AKIA", "ASIA"}) + g.random(16, b32) }},
	{id: "aws-secret-access-key", names: []string{"aws secret access key", "aws secret key", "secret access key"},
		value: func(g *gen) string { return g.random(40, b64) }},
	{id: "aws-session-token", shaped: true, names: []string{"aws session token", "session token"}, headers: []string{"X-Amz-Security-Token"},
		value: func(g *gen) string { return "IQoJb3JpZ2luX2Vj" + g.random(200+g.r.IntN(200), b64) }},
	{id: "gcp-api-key", shaped: true, names: []string{"google api key", "gemini api key", "maps api key"}, headers: []string{"X-Goog-Api-Key"},
		value: func(g *gen) string { return "AIza" + g.random(35, b64url) }},
	{id: "azure-storage-key", names: []string{"azure storage key", "storage account key", "account key"},
		value: func(g *gen) string { return base64.StdEncoding.EncodeToString(g.bytes(64)) }},
	{id: "azure-ad-client-secret", shaped: true, names: []string{"azure client secret", "client secret"},
		value: func(g *gen) string {
			return g.random(3, alnum) + string(digits[g.r.IntN(10)]) + "Q~" + g.random(34, alnum+"_~.-")
		}},
	{id: "slack-bot-token", shaped: true, names: []string{"slack bot token", "slack token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string {
			return "xoxb-" + g.rs(11, digits) + "-" + g.rs(13, digits) + "-" + g.random(24, alnum)
		}},
	{id: "stripe-secret-key", shaped: true, names: []string{"stripe secret key", "stripe api key", "stripe key"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string {
			return pick(g, []string{"sk_live_", "rk_live_"}) + g.random(24+g.r.IntN(75), alnum)
		}},
	{id: "twilio-auth-token", names: []string{"twilio auth token", "twilio token"},
		value: func(g *gen) string { return g.hex(32) }},
	{id: "sendgrid-api-key", shaped: true, names: []string{"sendgrid api key", "smtp password", "mail api key"},
		value: func(g *gen) string { return "SG." + g.random(22, b64url) + "." + g.random(43, b64url) }},
	{id: "npm-token", shaped: true, names: []string{"npm token", "npm auth token", "node auth token"},
		value: func(g *gen) string { return g.crcToken("npm_") }},
	{id: "pypi-token", shaped: true, names: []string{"pypi token", "twine password", "pypi api token"},
		value: func(g *gen) string { return "pypi-AgEIcHlwaS5vcmc" + g.random(70+g.r.IntN(80), b64url) }},
	{id: "huggingface-token", shaped: true, names: []string{"hf token", "huggingface token", "hugging face hub token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "hf_" + g.random(34, alnum) }},
	{id: "jwt", shaped: true, names: []string{"access token", "id token", "auth token", "jwt"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return g.jwt() }},
	{id: "private-key-rsa", shaped: true, multiline: true, names: []string{"private key", "ssh private key", "tls key", "signing key"},
		value: func(g *gen) string { return g.pem("RSA PRIVATE KEY", 600+g.r.IntN(600)) }},
	{id: "private-key-openssh", shaped: true, multiline: true, names: []string{"ssh private key", "deploy key", "ssh key"},
		value: func(g *gen) string { return g.pem("OPENSSH PRIVATE KEY", 300+g.r.IntN(100)) }},
	{id: "private-key-pkcs8", shaped: true, multiline: true, names: []string{"private key", "service account private key", "jwt private key"},
		value: func(g *gen) string {
			return g.pem(pick(g, []string{"PRIVATE KEY", "EC PRIVATE KEY"}), 120+g.r.IntN(1100))
		}},
	{id: "telegram-bot-token", shaped: true, names: []string{"telegram bot token", "bot token"},
		value: func(g *gen) string { return fmt.Sprint(1e8+g.r.IntN(9e9)) + ":AA" + g.random(33, b64url) }},
	{id: "discord-bot-token", shaped: true, names: []string{"discord bot token", "discord token"}, headers: []string{"Authorization"}, scheme: "Bot",
		value: func(g *gen) string {
			id := fmt.Sprint(100000000000000000 + g.r.Int64N(900000000000000000))
			return strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(id)), "=") + "." + g.random(6, b64url) + "." + g.random(38, b64url)
		}},
	{id: "shopify-token", shaped: true, names: []string{"shopify access token", "shopify token"}, headers: []string{"X-Shopify-Access-Token"},
		value: func(g *gen) string { return "shpat_" + g.hex(32) }},
	{id: "digitalocean-token", shaped: true, names: []string{"digitalocean token", "do token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "dop_v1_" + g.hex(64) }},
	{id: "linear-api-key", shaped: true, names: []string{"linear api key"}, headers: []string{"Authorization"},
		value: func(g *gen) string { return "lin_api_" + g.random(40, alnum) }},
	{id: "vault-token", shaped: true, names: []string{"vault token"}, headers: []string{"X-Vault-Token"},
		value: func(g *gen) string { return "hvs." + g.random(90, b64url) }},
	{id: "doppler-token", shaped: true, names: []string{"doppler token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string {
			if g.chance(0.5) {
				return "dp.st." + pick(g, []string{"dev", "prd", "stg", "prd_backend", "ci"}) + "." + g.random(40+g.r.IntN(5), alnum)
			}
			return pick(g, []string{"dp.pt.", "dp.sa.", "dp.ct."}) + g.random(43, alnum)
		}},
	{id: "postman-api-key", shaped: true, names: []string{"postman api key"}, headers: []string{"X-Api-Key"},
		value: func(g *gen) string { return "PMAK-" + g.hex(24) + "-" + g.hex(34) }},
	{id: "grafana-token", shaped: true, names: []string{"grafana token", "grafana service account token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "glsa_" + g.random(32, alnum) + "_" + g.hex(8) }},
	{id: "databricks-token", shaped: true, names: []string{"databricks token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "dapi" + g.hex(32) }},
	{id: "sentry-auth-token", shaped: true, names: []string{"sentry auth token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "sntryu_" + g.hex(64) }},
	{id: "groq-api-key", shaped: true, names: []string{"groq api key"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return "gsk_" + g.random(52, alnum) }},
	{id: "mailgun-api-key", shaped: true, names: []string{"mailgun api key"},
		value: func(g *gen) string { return "key-" + g.hex(32) }},
	{id: "heroku-api-key", names: []string{"heroku api key"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return g.uuid() }},
	{id: "codecov-token", names: []string{"codecov token", "upload token"},
		value: func(g *gen) string { return g.uuid() }},
	{id: "age-secret-key", shaped: true, names: []string{"age secret key", "sops age key"},
		value: func(g *gen) string { return "AGE-SECRET-KEY-1" + g.random(58, bech32) }},
	{id: "newrelic-api-key", shaped: true, names: []string{"new relic api key", "newrelic user key"}, headers: []string{"Api-Key"},
		value: func(g *gen) string { return "NRAK-" + g.random(27, upper+digits) }},
	{id: "google-client-secret", shaped: true, names: []string{"google client secret", "oauth client secret"},
		value: func(g *gen) string { return "GOCSPX-" + g.random(28, b64url) }},
	{id: "terraform-cloud-token", shaped: true, names: []string{"tfe token", "terraform cloud token", "atlas token"}, headers: []string{"Authorization"}, scheme: "Bearer",
		value: func(g *gen) string { return g.random(14, lower+digits) + ".atlasv1." + g.random(67, b64url) }},
	{id: "datadog-api-key", names: []string{"datadog api key", "dd api key"}, headers: []string{"DD-API-KEY"},
		value: func(g *gen) string { return g.hex(32) }},
	{id: "datadog-app-key", names: []string{"datadog app key", "dd application key"}, headers: []string{"DD-APPLICATION-KEY"},
		value: func(g *gen) string { return g.hex(40) }},
	{id: "generic-api-key", names: []string{"api key", "service api key", "partner api key", "acme api key"}, headers: []string{"X-Api-Key", "Api-Key", "X-Acme-Key"},
		value: func(g *gen) string { return g.random(24+g.r.IntN(24), alnum) }},
	{id: "generic-token", names: []string{"auth token", "access token", "service token", "webhook token", "refresh token"},
		headers: []string{"X-Auth-Token", "X-Access-Token", "X-Service-Token"},
		value: func(g *gen) string {
			switch g.r.IntN(3) {
			case 0:
				return g.hex(64)
			case 1:
				return g.random(32+g.r.IntN(16), b64url)
			}
			return base64.StdEncoding.EncodeToString(g.bytes(32))
		}},
	{id: "generic-secret", names: []string{"client secret", "app secret", "session secret", "jwt secret", "secret key base", "signing secret", "webhook secret", "encryption key"},
		headers: []string{"X-Client-Secret", "X-Webhook-Secret"},
		value: func(g *gen) string {
			switch g.r.IntN(3) {
			case 0:
				return g.hex(64)
			case 1:
				return base64.URLEncoding.EncodeToString(g.bytes(32))
			}
			return g.random(50, alnum+"!@#%^&*(-_=+)")
		}},
	{id: "password-human", names: []string{"password", "db password", "admin password", "smtp password", "redis password", "postgres password"},
		flags: []string{"--password", "-p"},
		value: func(g *gen) string { return g.humanPassword() }},
	{id: "password-strong", names: []string{"password", "database password", "root password", "mysql root password", "user password"},
		flags: []string{"--password", "--db-password"},
		value: func(g *gen) string { return g.strongPassword(g.chance(0.5)) }},
}
