package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// Detectors written in Go: formats whose extent or validity a regular
// expression cannot judge (PEM bodies with escaped newlines, credentials in
// URLs, command-line flags, structure-only tokens).

func goRules() []*rule {
	return []*rule{
		{id: "private-key", description: "PEM private key body (RSA, EC, DSA, PKCS#8, encrypted, OpenSSH, PGP), also with JSON-escaped newlines",
			keywords: []string{"-----BEGIN "}, caseSensitive: true, prio: prioPEM, detect: detectPEM},
		{id: "private-key", description: "PuTTY private key lines", keywords: []string{"Private-Lines:"}, caseSensitive: true,
			prio: prioPEM, detect: detectPuTTY},
		{id: "url-password", description: "password in a URL's user information (database, broker, HTTP, git remotes)",
			keywords: []string{"://"}, prio: prioURL, detect: detectURLCreds},
		{id: "basic-auth-password", description: "user:password given to curl -u / --user and similar flags",
			keywords: []string{"-u ", "--user ", "--user=", "--basic-auth ", "--proxy-user "}, prio: prioURL, detect: detectUserFlag},
		{id: "password", description: "password flag of the tools that define one (mysql -pSECRET, docker login -p, ldapsearch -w, redis-cli -a, sqlcmd -P, keytool -storepass, ...)",
			keywords: toolFlagKeywords(), caseSensitive: true, prio: prioContext, detect: detectToolFlag},
		{id: "password", description: "OpenSSL -passin/-passout pass:PASSWORD", keywords: []string{"pass:"}, caseSensitive: true,
			prio: prioContext, detect: detectOpenSSLPass},
		{id: "password", description: "SQL user and role passwords (IDENTIFIED BY, WITH PASSWORD)",
			keywords: []string{"identified by", "password '", "password \"", "password e'"}, prio: prioContext, detect: detectSQLPassword},
		{id: "password", description: "Redis AUTH command and requirepass/masterauth settings",
			keywords: []string{"auth ", "requirepass ", "masterauth "}, prio: prioContext, detect: detectRedisAuth},
		{id: "password", description: "password in prose after a login or credentials (\"login is admin / S3cret!\")",
			keywords: []string{"login", "credentials", "creds"}, prio: prioContext, detect: detectLoginPair},
		{id: "kubernetes-secret", description: "values under data: or stringData: of a Kubernetes Secret (YAML or JSON)",
			keywords: []string{"kind: secret", "kind: 'secret'", "kind: \"secret\"", "\"kind\":\"secret\"", "\"kind\": \"secret\""},
			prio:     prioContext, detect: detectK8sSecret},
		{id: "secret-file", description: "lone high-entropy line printed by cat of a key, secret or token file",
			keywords: []string{"cat "}, prio: prioContext, detect: detectCatSecretFile},
		{id: "secret-command", description: "value given to a secret-setting command (gh secret set, kubectl create secret --from-literal, vault kv put, fly secrets set, aws ssm put-parameter SecureString, ...)",
			keywords: secretCommandKeywords(), prio: prioContext, detect: detectSecretCommand},
		{id: "terraform-variable", description: "default of a Terraform variable that is sensitive or named like a secret",
			keywords: []string{"variable \""}, caseSensitive: true, prio: prioContext, detect: detectTerraformVariable},
	}
}

// isPEMSep reports a separator inside a PEM body at t[i], and its length:
// blanks, line breaks, and escaped line breaks (\n, \\n, \r\n) as found
// when the key sits inside a JSON or shell string.
func pemSepLen(t string, i int) int {
	c := t[i]
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		return 1
	}
	if c == '\\' {
		j := i
		for j < len(t) && t[j] == '\\' {
			j++
		}
		if j < len(t) && (t[j] == 'n' || t[j] == 'r' || t[j] == 't') {
			return j + 1 - i
		}
	}
	return 0
}

func isB64Byte(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}

func detectPEM(sc *scan, ks, ke int) {
	t := sc.text
	le := strings.Index(t[ke:min(len(t), ke+64)], "-----")
	if le < 0 {
		return
	}
	label := t[ke : ke+le]
	if !strings.Contains(label, "PRIVATE KEY") {
		return // certificates, public keys, CSRs are not secret
	}
	bodyStart := ke + le + 5
	bodyEnd := -1
	switch {
	case sc.pemEnd >= bodyStart:
		bodyEnd = sc.pemEnd // the END found for an earlier BEGIN is the next one
	case sc.pemNoEndFrom < 0 || bodyStart < sc.pemNoEndFrom:
		limit := min(len(t), bodyStart+1<<20)
		if i := strings.Index(t[bodyStart:limit], "-----END"); i >= 0 {
			bodyEnd = bodyStart + i
			sc.pemEnd = bodyEnd
		} else if limit == len(t) {
			sc.pemNoEndFrom = bodyStart // no END anywhere after: do not search again
		}
	}
	if bodyEnd < 0 {
		bodyEnd = truncatedPEMEnd(t, bodyStart)
	}
	sc.skipTo(sc.curRule, bodyEnd) // a BEGIN inside this body is not another key
	// A body may be split over quoted pieces ("...\n" + "...\n"): mask each
	// piece and leave the quotes and the code between them alone.
	s := bodyStart
	for s < bodyEnd {
		e := s
		for e < bodyEnd && !(isQuote(t[e]) && !escapedAt(t, e)) {
			e++
		}
		addPEMPiece(sc, s, e)
		s = e + 1
	}
}

func addPEMPiece(sc *scan, s, e int) {
	t := sc.text
	for s < e {
		n := pemSepLen(t, s)
		if n == 0 {
			break
		}
		s += n
	}
	for e > s {
		c := t[e-1]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			e--
			continue
		}
		if (c == 'n' || c == 'r' || c == 't') && escapedAt(t, e-1) {
			e--
			for e > s && t[e-1] == '\\' {
				e--
			}
			continue
		}
		break
	}
	b64 := 0
	for i := s; i < e; i++ {
		if isAlnum(t[i]) {
			b64++
		}
	}
	if b64 >= 16 {
		sc.add(s, e, sc.eng.labelRule("private-key"))
	}
}

// truncatedPEMEnd finds where a PEM body without an END line stops: at the
// first byte that is neither base64, a separator nor part of a header line.
func truncatedPEMEnd(t string, i int) int {
	for i < len(t) {
		if n := pemSepLen(t, i); n > 0 {
			i += n
			continue
		}
		if isB64Byte(t[i]) {
			j := i
			for j < len(t) && isB64Byte(t[j]) {
				j++
			}
			if j < len(t) && t[j] == ':' { // Proc-Type:, DEK-Info:, Comment:
				for j < len(t) && t[j] != '\n' && pemSepLen(t, j) == 0 {
					j++
				}
			}
			i = j
			continue
		}
		break
	}
	return i
}

func detectPuTTY(sc *scan, ks, ke int) {
	t := sc.text
	i := strings.IndexByte(t[ke:min(len(t), ke+16)], '\n')
	if i < 0 {
		return
	}
	s := ke + i + 1
	e := strings.Index(t[s:min(len(t), s+1<<16)], "Private-MAC:")
	if e < 0 {
		e = truncatedPEMEnd(t, s) - s
	}
	addPEMPiece(sc, s, s+e)
}

// Trivial passwords in URLs are documentation, not credentials.
var trivialURLPasswords = set("pass", "password", "passwd", "pwd", "secret", "xxx", "user", "username", "pw", "****", "***",
	"foo", "bar", "baz", "qux", "test", "testing", "dummy", "qwerty")

// detectURLCreds finds the password of scheme://user:password@host. The
// password is taken as people write it, unencoded too: it may hold / ? # (
// [ < > and even @, so the authority does not end at the first of them.
// The user name ends at the first colon and holds none of / ? # @; the
// password ends at the first @ followed by a host and what may follow a
// host (a port, a path, a query, the end of the URL). It never spans a
// blank, a quote or another "://".
func detectURLCreds(sc *scan, ks, ke int) {
	t := sc.text
	s := ks
	for s > 0 && ks-s < 32 && (isAlnum(t[s-1]) || t[s-1] == '+' || t[s-1] == '.' || t[s-1] == '-') {
		s--
	}
	if s == ks {
		return
	}
	u := ke
	colon := -1
	for j := u; j < len(t) && j-u < 256; j++ {
		c := t[j]
		if c == ':' {
			colon = j
			break
		}
		if c == '/' || c == '?' || c == '#' || c == '@' || c == '[' || isSpace(c) || isQuote(c) || c == '\\' || c == '<' || c == '>' {
			return
		}
	}
	if colon < 0 {
		return
	}
	ps := colon + 1
	pe := -1
	for j := ps; j < len(t) && j-ps < 512; j++ {
		c := t[j]
		if isSpace(c) || isQuote(c) || c == '\\' || (c == ':' && strings.HasPrefix(t[j:], "://")) {
			break
		}
		if c == '@' && hostFollows(t, j+1) {
			pe = j
			break
		}
	}
	if pe <= ps {
		return
	}
	pw := t[ps:pe]
	if strings.IndexByte(pw, '%') >= 0 {
		if d, err := url.PathUnescape(pw); err == nil {
			pw = d // judged decoded: %7B%7B%20token%20%7D%7D is {{ token }}
		}
	}
	if trivialURLPasswords[strings.ToLower(pw)] || isReference(pw) || isPlaceholder(pw) || isCode(pw) {
		return
	}
	if _, ok := maskAt(t, ps); ok {
		return
	}
	sc.add(ps, pe, sc.eng.labelRule("url-password"))
}

// hostFollows reports whether a URL's host starts at t[i] and is followed
// by what may follow a host: a port, a path, a query, a fragment or the
// end of the URL.
func hostFollows(t string, i int) bool {
	j := i
	if j < len(t) && t[j] == '[' { // an IPv6 literal
		e := strings.IndexByte(t[j:min(len(t), j+48)], ']')
		if e < 0 {
			return false
		}
		j += e + 1
	} else {
		for j < len(t) && (isAlnum(t[j]) || t[j] == '.' || t[j] == '-' || t[j] == '_') && j-i < 256 {
			j++
		}
		if j == i || !isAlnum(t[i]) {
			return false
		}
	}
	if j >= len(t) {
		return true
	}
	switch c := t[j]; {
	case c == ':':
		return j+1 < len(t) && t[j+1] >= '0' && t[j+1] <= '9' || j+1 == len(t) || t[j+1] == '/'
	case c == '/' || c == '?' || c == '#' || isSpace(c) || isQuote(c) || c == '\\':
		return true
	case c == ',' || c == ';' || c == ')' || c == ']' || c == '>' || c == '<' || c == '|' || c == '`':
		return true
	}
	return false
}

// detectUserFlag finds the password in curl -u user:password and the
// like.
func detectUserFlag(sc *scan, ks, ke int) {
	t := sc.text
	if ks > 0 && !isSpace(t[ks-1]) {
		return
	}
	k := skipBlanks(t, ke)
	vs, ve, ok := readValue(t, k, false, false, false)
	if !ok {
		return
	}
	v := t[vs:ve]
	colon := strings.IndexByte(v, ':')
	if colon < 0 {
		return
	}
	ps := vs + colon + 1
	if ps == ve && vs == k && ve < len(t) && isQuote(t[ve]) {
		// user:'password' (a bare user: the quote at ve is not the
		// closing quote of "user:")
		if s2, e2, ok2 := readValue(t, ve, false, false, false); ok2 {
			ps, ve = s2, e2
		}
	}
	if ps == ve {
		// "-u KEY:" passes an API key as the user name (Stripe,
		// Elasticsearch, Mailgun): mask the user when it looks random.
		if user := t[vs : ps-1]; len(user) >= 8 && !isReference(user) && !isPlaceholder(user) && !looksLikeWords(user) && entropy(user) >= 3 {
			sc.add(vs, ps-1, sc.eng.labelRule("basic-auth-password"))
		}
		return
	}
	pw := t[ps:ve]
	if len(pw) < 4 || isReference(pw) || isPlaceholder(pw) || allDigits(pw) || looksLikeWords(pw) {
		return
	}
	if _, ok := maskAt(t, ps); ok {
		return
	}
	sc.add(ps, ve, sc.eng.labelRule("basic-auth-password"))
}

// Files whose whole content is a secret when printed.
var secretFileWords = []string{"master.key", ".key", "secret", "token", "password", "passwd", "credential", "apikey", "api_key", "api-key"}

// detectCatSecretFile masks the lone line printed by "cat FILE" when the
// file's name says it holds a key, token or password.
func detectCatSecretFile(sc *scan, ks, ke int) {
	t := sc.text
	if ks > 0 && !(isSpace(t[ks-1]) || t[ks-1] == '$' || t[ks-1] == '>' || t[ks-1] == ';' || t[ks-1] == '&' || t[ks-1] == '|') && !lineSepBefore(t, ks) {
		return
	}
	k := skipBlanks(t, ke)
	fe := k
	for fe < len(t) && !isSpace(t[fe]) && t[fe] != '\\' && t[fe] != '"' && fe-k < 256 {
		fe++
	}
	file := strings.ToLower(t[k:fe])
	match := false
	for _, w := range secretFileWords {
		if strings.Contains(file, w) {
			match = true
		}
	}
	if !match || strings.HasSuffix(file, ".pub") || strings.HasSuffix(file, ".json") || strings.HasSuffix(file, ".yml") || strings.HasSuffix(file, ".yaml") {
		return
	}
	// The output is the next line; it must be one token alone on its line.
	i := fe
	for i < len(t) && t[i] != '\n' && pemSepLen(t, i) <= 1 && i-fe < 64 {
		i++
	}
	if i >= len(t) {
		return
	}
	i += max(1, pemSepLen(t, i))
	s := i
	for i < len(t) && isTokenByte(t[i]) && i-s < 1024 {
		i++
	}
	if i < len(t) && !(t[i] == '\n' || t[i] == '\r' || (t[i] == '\\' && pemSepLen(t, i) > 1)) {
		return
	}
	v := t[s:i]
	if len(v) < 16 || isPlaceholder(v) || entropy(v) < 3.0 {
		return
	}
	sc.add(s, i, sc.eng.labelRule("secret-file"))
}

// structuralScan finds tokens known by their shape alone, with no literal
// to key on: Discord bot tokens (a base64 user id, a timestamp and an HMAC,
// joined by dots) and 64-byte base64 account keys (Azure Storage, Cosmos
// DB, Service Bus) ending in "==". It jumps between dots and "==" with
// the string package's vectorised search rather than looking at every byte.
func structuralScan(sc *scan) {
	t := sc.text
	for i := 0; ; {
		j := strings.Index(t[i:], "==")
		if j < 0 {
			break
		}
		e := i + j + 2
		s := e - 88
		if s >= 0 && (s == 0 || !isTokenByte(t[s-1])) && (e == len(t) || !isTokenByte(t[e])) && azureAccountKey(t, s, e) {
			sc.add(s, e, sc.eng.labelRule("azure-account-key"))
		}
		i = e
	}
	for i := 0; ; {
		j := strings.IndexByte(t[i:], '.')
		if j < 0 {
			break
		}
		d := i + j
		i = d + 1
		// The first part: 23 to 28 base64 characters before the dot.
		s := d
		for s > 0 && d-s <= 28 && (isAlnum(t[s-1]) || t[s-1] == '-' || t[s-1] == '_') {
			s--
		}
		if d-s < 23 || d-s > 28 || (s > 0 && isTokenByte(t[s-1])) {
			continue
		}
		e := d + 1
		for e < len(t) && e-d <= 48 && (isAlnum(t[e]) || t[e] == '-' || t[e] == '_' || t[e] == '.') {
			e++
		}
		if e-s >= 59 && e-s <= 80 && discordBotToken(t[s:e]) && rightBoundary(t, e) {
			sc.add(s, e, sc.eng.labelRule("discord-bot-token"))
			i = e
		}
	}
}

func discordBotToken(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || len(parts[0]) < 23 || len(parts[0]) > 28 || len(parts[1]) < 6 || len(parts[1]) > 7 ||
		len(parts[2]) < 27 || len(parts[2]) > 40 {
		return false
	}
	id, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil {
		if id, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[0], "=")); err != nil {
			return false
		}
	}
	return len(id) >= 17 && len(id) <= 20 && allDigits(string(id)) && entropy(parts[2]) >= 3.5
}

// azureAccountKey accepts 86 base64 characters and "==" (64 random bytes),
// unless the text around names it a digest.
func azureAccountKey(t string, s, e int) bool {
	v := t[s:e]
	if !strings.HasSuffix(v, "==") || v[85] == '=' {
		return false
	}
	for i := 0; i < 86; i++ {
		if !isAlnum(v[i]) && v[i] != '+' && v[i] != '/' {
			return false
		}
	}
	if entropy(v) < 5.0 {
		return false
	}
	before := strings.ToLower(t[max(0, s-120):s])
	for _, w := range []string{"sha512", "sha384", "digest", "checksum", "hash", "integrity", "signature", "sig="} {
		if strings.Contains(before, w) {
			return false
		}
	}
	return true
}

// detectLoginPair finds "login is USER / PASSWORD" and "credentials:
// USER/PASSWORD" in prose.
func detectLoginPair(sc *scan, ks, ke int) {
	t := sc.text
	if !leftBoundary(t, ks) || (ke < len(t) && isAlnum(t[ke])) {
		return
	}
	k := ke
	for _, w := range []string{" is ", " are ", ": ", " = ", " - ", " "} {
		if strings.HasPrefix(t[k:], w) {
			k += len(w)
			break
		}
	}
	if k == ke {
		return
	}
	k = skipBlanks(t, k)
	us := k
	for k < len(t) && (isAlnum(t[k]) || strings.IndexByte("._@+-", t[k]) >= 0) && k-us < 64 {
		k++
	}
	if k == us {
		return
	}
	k = skipBlanks(t, k)
	if k >= len(t) || t[k] != '/' {
		return
	}
	k = skipBlanks(t, k+1)
	ps := k
	for k < len(t) && !isSpace(t[k]) && !isQuote(t[k]) && !(t[k] == '\\' && pemSepLen(t, k) > 1) && k-ps < 128 {
		k++
	}
	for k > ps && strings.IndexByte(".,;:!?)", t[k-1]) >= 0 {
		k--
	}
	if k == ps || !plausibleValue(t[ps:k], namePassword) {
		return
	}
	sc.add(ps, k, sc.eng.labelRule("password"))
}

// detectK8sSecret masks the values of a Kubernetes Secret's data and
// stringData maps: the manifest itself says they are secret.
func detectK8sSecret(sc *scan, ks, ke int) {
	t := sc.text
	if ke < len(t) && isAlnum(t[ke]) {
		return // kind: SecretProviderClass, SecretStore
	}
	if ke < len(t) && t[ke] == '"' && ks > 0 && t[ks] != '"' {
		// kind: "secret" matched as 'kind: "secret' + '"': fine.
	}
	// The manifest: from the previous document separator to the next.
	from := max(0, ks-8192)
	if i := strings.LastIndex(t[from:ks], "\n---"); i >= 0 {
		from += i + 4
	}
	to := min(len(t), ke+8192)
	if i := strings.Index(t[ke:to], "\n---"); i >= 0 {
		to = ke + i
	}
	sc.skipTo(sc.curRule, to) // one manifest, read once
	doc := t[from:to]
	for _, key := range []string{"data:", "stringData:", "\"data\":", "\"stringData\":"} {
		for off := 0; off < len(doc); {
			i := strings.Index(doc[off:], key)
			if i < 0 {
				break
			}
			at := from + off + i
			off += i + len(key)
			if key[0] == '"' {
				k8sJSONData(sc, at+len(key))
			} else if lineSepBefore(t, at-indentBefore(t, at)) {
				k8sYAMLData(sc, at, at+len(key))
			}
		}
	}
}

// indentBefore counts the blanks before t[i] on its line.
func indentBefore(t string, i int) int {
	n := 0
	for i-n > 0 && (t[i-n-1] == ' ' || t[i-n-1] == '\t') {
		n++
	}
	return n
}

func k8sYAMLData(sc *scan, keyAt, end int) {
	t := sc.text
	ind, _ := indentAt(t, keyAt)
	i := end
	nl := strings.IndexByte(t[i:], '\n')
	if nl < 0 || strings.TrimSpace(t[i:i+nl]) != "" {
		return
	}
	i += nl + 1
	for i < len(t) {
		e := strings.IndexByte(t[i:], '\n')
		if e < 0 {
			e = len(t) - i
		}
		line := t[i : i+e]
		li := len(line) - len(strings.TrimLeft(line, " \t"))
		if strings.TrimSpace(line) == "" {
			i += e + 1
			continue
		}
		if li <= ind {
			return
		}
		if c := strings.Index(line, ": "); c > li {
			name := strings.Trim(line[li:c], "'\"")
			vs := i + c + 2
			vs = skipBlanks(t, vs)
			ve := i + len(strings.TrimRight(line, " \t\r"))
			if vs < ve && t[vs] == t[ve-1] && isQuote(t[vs]) {
				vs, ve = vs+1, ve-1
			}
			if vs < ve && isBlockIndicator(t[vs:ve]) {
				vs, ve, _ = yamlBlock(t, i+li, ve)
			}
			k8sValue(sc, name, vs, ve)
		}
		i += e + 1
	}
}

func k8sJSONData(sc *scan, i int) {
	t := sc.text
	i = skipSpaceNL(t, i)
	if i >= len(t) || t[i] != '{' {
		return
	}
	i++
	for i < len(t) {
		i = skipSpaceNL(t, i)
		if i >= len(t) || t[i] != '"' {
			return
		}
		ns := i + 1
		ne := ns
		for ne < len(t) && t[ne] != '"' {
			ne++
		}
		i = skipSpaceNL(t, ne+1)
		if i >= len(t) || t[i] != ':' {
			return
		}
		i = skipSpaceNL(t, i+1)
		if i >= len(t) || t[i] != '"' {
			return
		}
		vs := i + 1
		ve := vs
		for ve < len(t) && t[ve] != '"' {
			if t[ve] == '\\' {
				ve++
			}
			ve++
		}
		if ve >= len(t) {
			return
		}
		k8sValue(sc, t[ns:ne], vs, ve)
		i = skipSpaceNL(t, ve+1)
		if i < len(t) && t[i] == ',' {
			i++
			continue
		}
		return
	}
}

func skipSpaceNL(t string, i int) int {
	for i < len(t) && isSpace(t[i]) {
		i++
	}
	return i
}

// k8sValue masks one entry of a Secret, unless it is public material (a
// certificate or public key, base64 or not) or a reference.
func k8sValue(sc *scan, name string, vs, ve int) {
	if vs < 0 || ve-vs < 4 {
		return
	}
	t := sc.text
	v := t[vs:ve]
	ln := strings.ToLower(name)
	if strings.HasSuffix(ln, ".crt") || strings.HasSuffix(ln, "cert") || strings.HasSuffix(ln, ".pub") {
		return
	}
	if d := decodeB64Prefix(strings.Join(strings.Fields(v), "")); strings.HasPrefix(d, "-----BEGIN CERTIFICATE") || strings.HasPrefix(d, "-----BEGIN PUBLIC KEY") ||
		strings.HasPrefix(v, "-----BEGIN CERTIFICATE") || isReference(v) || isPlaceholder(v) {
		return
	}
	if _, ok := maskAt(t, vs); ok {
		return
	}
	sc.add(vs, ve, sc.eng.labelRule("kubernetes-secret"))
}
