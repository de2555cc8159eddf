package redact

import (
	"strings"
)

// Secret-setting commands: a value given to a command that stores it as a
// secret is a secret, whatever it looks like and whatever its name: gh
// secret set NAME --body VALUE, kubectl create secret ... --from-literal=
// KEY=VALUE, fly secrets set NAME=VALUE, vault kv put PATH KEY=VALUE, aws
// ssm put-parameter --type SecureString --value VALUE, az keyvault secret
// set --value VALUE, echo VALUE | docker login --password-stdin. The same
// UUID given as --request-id to another command is not one.

// secretCommand describes how a command passes the secret it stores.
type secretCommand struct {
	// pairs: NAME=VALUE words after the keyword are secrets.
	pairs bool
	// flags whose value is the secret.
	flags []string
	// positional: the second plain word after the keyword is the secret
	// (user-secrets set KEY VALUE).
	positional bool
	// named: KEY VALUE, where the value counts only when KEY is
	// secret-like (aws configure set, npm config set, setx: commands that
	// set any setting, secrets among them).
	named bool
	// first: the first plain word is the secret (ConvertTo-SecureString).
	first bool
	// secureFlag, if set, must be on the command for its values to count,
	// unless the stored name is secret-like (aws ssm's --type
	// SecureString).
	secureFlag string
}

// secretCommands are keyed by the words that name the command (lower
// case); the keyword pass finds them.
var secretCommands = map[string]secretCommand{
	"secret set":             {pairs: true, flags: []string{"--body", "-b"}},            // gh secret set, dotnet user-secrets set is below
	"secrets set":            {pairs: true, flags: []string{"--body", "-b", "--value"}}, // fly, flyctl, doppler, supabase, infisical
	"secret put":             {flags: []string{"--value"}},
	"kv put":                 {pairs: true}, // vault kv put PATH KEY=VALUE
	"vault write":            {pairs: true}, // vault write PATH KEY=VALUE
	"--from-literal":         {pairs: true}, // kubectl create secret generic NAME --from-literal=KEY=VALUE
	"put-parameter":          {flags: []string{"--value"}, secureFlag: "securestring"},
	"--secret-string":        {flags: []string{"--secret-string"}}, // aws secretsmanager create-secret / put-secret-value
	"keyvault secret set":    {flags: []string{"--value"}},
	"user-secrets set":       {positional: true},
	"config set --secret":    {positional: true}, // pulumi config set --secret KEY VALUE
	"--password-stdin":       {},                 // echo VALUE | docker login --password-stdin
	"config set":             {named: true},      // npm, git, yarn, poetry config set KEY VALUE
	"configure set":          {named: true},      // aws configure set aws_secret_access_key VALUE
	"setx":                   {named: true},      // Windows: setx NAME VALUE
	"convertto-securestring": {first: true},      // PowerShell: ConvertTo-SecureString "VALUE" -AsPlainText
}

func secretCommandKeywords() []string {
	kws := make([]string, 0, len(secretCommands))
	for k := range secretCommands {
		kws = append(kws, k)
	}
	return kws
}

// shellWord is one word of a command line: its bytes, and the bytes of its
// value once quotes are taken off.
type shellWord struct{ s, e int }

// commandLine returns the extent of the command line holding t[i]: from
// the start of its line to its end, continuation lines (a backslash before
// the line break) included. It is bounded, so a scan stays linear.
func commandLine(t string, i int) (int, int) {
	s := i
	for s > 0 && i-s < 2048 && t[s-1] != '\n' {
		s--
	}
	e := i
	for e < len(t) && e-i < 4096 {
		if t[e] == '\n' {
			if e > 0 && t[e-1] == '\\' {
				e++
				continue
			}
			break
		}
		e++
	}
	return s, e
}

// splitShell splits t[s:e] into words at unquoted blanks (and escaped line
// breaks), keeping quotes in the words.
func splitShell(t string, s, e int) []shellWord {
	var words []shellWord
	start := -1
	var quote byte
	for i := s; i < e; i++ {
		c := t[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
			continue
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			if i+1 < e && t[i+1] == '\n' {
				if start >= 0 {
					words = append(words, shellWord{start, i})
					start = -1
				}
				i++
				continue
			}
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if start >= 0 {
				words = append(words, shellWord{start, i})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, shellWord{start, e})
	}
	return words
}

// unquoteSpan takes the quotes off the value at t[s:e]: 'x', "x".
func unquoteSpan(t string, s, e int) (int, int) {
	if e-s >= 2 && (t[s] == '\'' || t[s] == '"') && t[e-1] == t[s] {
		return s + 1, e - 1
	}
	return s, e
}

// detectSecretCommand is the keyword entry for secretCommands.
func detectSecretCommand(sc *scan, ks, ke int) {
	t := sc.text
	cmd, ok := secretCommands[strings.ToLower(t[ks:ke])]
	if !ok || (ks > 0 && isAlnum(t[ks-1])) || (ke < len(t) && isAlnum(t[ke]) && t[ke-1] != '=') {
		return
	}
	ls, le := commandLine(t, ks)
	sc.skipTo(sc.curRule, max(sc.skipFrom(sc.curRule), le))
	// The command ends at a pipe, ;, && or || after the keyword; before a
	// pipe into it, echo/printf may pass the secret on stdin.
	end := le
	for _, sep := range []string{" | ", " && ", " || ", "; "} {
		if i := strings.Index(t[ke:end], sep); i >= 0 {
			end = ke + i
		}
	}
	if cmd.secureFlag != "" && !strings.Contains(strings.ToLower(t[ls:end]), cmd.secureFlag) && !secretNamed(t, ls, end) {
		return
	}
	piped := strings.LastIndex(t[ls:ks], "| ")
	if piped >= 0 {
		echoed(sc, t, ls, ls+piped)
	}
	words := splitShell(t, ke, end)
	plain := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		text := t[w.s:w.e]
		if strings.HasPrefix(text, "-") {
			for _, f := range cmd.flags {
				switch {
				case text == f && i+1 < len(words):
					i++
					secretValue(sc, t, words[i].s, words[i].e)
				case strings.HasPrefix(text, f+"="):
					secretValue(sc, t, w.s+len(f)+1, w.e)
				}
			}
			if cmd.pairs && strings.HasPrefix(text, "--from-literal=") {
				pairValue(sc, t, w.s+len("--from-literal="), w.e)
			}
			continue
		}
		if cmd.pairs && w.s == ke && t[ke] == '=' {
			pairValue(sc, t, w.s+1, w.e) // --from-literal=KEY=VALUE: the keyword's own word
			continue
		}
		plain++
		switch {
		case cmd.pairs && strings.IndexByte(text, '=') > 0:
			pairValue(sc, t, w.s, w.e)
		case cmd.positional && plain == 2, cmd.first && plain == 1:
			secretValue(sc, t, w.s, w.e)
		case cmd.named && plain == 2:
			ns, ne := unquoteSpan(t, words[i-1].s, words[i-1].e)
			name := t[ns:ne]
			if k := strings.LastIndexAny(name, ":/."); k >= 0 {
				name = name[k+1:] // //registry.npmjs.org/:_authToken, profile.x.aws_secret_access_key
			}
			if class, label := classifyName(name); class != nameNone {
				vs, ve := unquoteSpan(t, w.s, w.e)
				if plausibleValue(t[vs:ve], class) {
					sc.add(vs, ve, sc.eng.labelRule(label))
				}
			}
		}
	}
}

// pairValue masks VALUE of the word NAME=VALUE at t[s:e].
func pairValue(sc *scan, t string, s, e int) {
	eq := strings.IndexByte(t[s:e], '=')
	if eq <= 0 {
		return
	}
	name := t[s : s+eq]
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return // not NAME=VALUE
		}
	}
	secretValue(sc, t, s+eq+1, e)
}

// secretValue masks the value at t[s:e] (quotes taken off) unless it is
// no value at all: a reference, a placeholder, a file or stdin.
func secretValue(sc *scan, t string, s, e int) {
	s, e = unquoteSpan(t, s, e)
	v := t[s:e]
	if len(v) < 4 || v[0] == '@' || v[0] == '-' || isReference(v) || isPlaceholder(v) || strings.HasPrefix(v, "file://") ||
		strings.HasPrefix(v, "fileb://") || strings.Contains(v, maskKeyword) {
		return
	}
	sc.add(s, e, sc.eng.labelRule("secret-command"))
}

// echoed masks what echo or printf writes in the segment t[s:e] that
// pipes into a secret-setting command.
func echoed(sc *scan, t string, s, e int) {
	if i := strings.LastIndex(t[s:e], "&& "); i >= 0 {
		s += i + 3
	}
	words := splitShell(t, s, e)
	for len(words) > 0 {
		w := t[words[0].s:words[0].e]
		if w == "$" || w == ">" {
			words = words[1:]
			continue
		}
		if w != "echo" && w != "printf" {
			return
		}
		break
	}
	if len(words) < 2 {
		return
	}
	for _, w := range words[1:] {
		if text := t[w.s:w.e]; strings.HasPrefix(text, "-") || strings.Contains(text, "%s") {
			continue // echo -n, printf '%s'
		}
		secretValue(sc, t, w.s, w.e)
	}
}

// secretNamed reports whether a command stores its value under a
// secret-like name (--name /prod/db_password).
func secretNamed(t string, s, e int) bool {
	words := splitShell(t, s, e)
	for i, w := range words {
		if t[w.s:w.e] == "--name" && i+1 < len(words) {
			ns, ne := unquoteSpan(t, words[i+1].s, words[i+1].e)
			name := t[ns:ne]
			if k := strings.LastIndexAny(name, "/:"); k >= 0 {
				name = name[k+1:]
			}
			class, _ := classifyName(name)
			return class != nameNone
		}
	}
	return false
}
