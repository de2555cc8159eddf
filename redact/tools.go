package redact

import "strings"

// Passwords given on command lines and in the languages of tools: flags
// whose argument is a password only for the tools that define them (-w is
// ldapsearch's password, ls's width), SQL's IDENTIFIED BY and PASSWORD,
// Redis's AUTH and requirepass, OpenSSL's pass:.

// toolFlag is a flag whose argument is a password, for the tools named.
type toolFlag struct {
	flag  string   // as written, after a blank: "-p", "-w"
	tools []string // one of these words is on the command line (lower case)
	glued bool     // the password follows the flag directly: -pSECRET
}

var toolFlags = []toolFlag{
	{"-p", []string{"mysql", "mariadb", "mysqldump", "mysqladmin", "7z", "7za"}, true},
	{"-p", []string{" login", "sshpass", "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"}, false},
	{"-w", []string{"ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldappasswd", "ldapwhoami", "ldapcompare"}, false},
	{"-a", []string{"redis-cli", "keydb-cli"}, false},
	{"-P", []string{"sqlcmd", "bcp", "zip ", "unzip", "isql"}, false},
	{"-storepass", []string{"keytool", "jarsigner"}, false},
	{"-keypass", []string{"keytool", "jarsigner"}, false},
	{"-srcstorepass", []string{"keytool"}, false},
	{"-deststorepass", []string{"keytool"}, false},
}

func toolFlagKeywords() []string {
	var kws []string
	for _, f := range toolFlags {
		kws = append(kws, " "+f.flag)
	}
	return kws
}

// detectToolFlag masks the argument of a tool's password flag.
func detectToolFlag(sc *scan, ks, ke int) {
	t := sc.text
	flag := t[ks+1 : ke]
	ls := ks
	for ls > 0 && ks-ls < 300 && !lineSepBefore(t, ls) {
		ls--
	}
	line := strings.ToLower(t[ls:ks])
	for _, f := range toolFlags {
		if f.flag != flag || !containsAny(line, f.tools) {
			continue
		}
		var vs, ve int
		var ok bool
		switch {
		case ke < len(t) && t[ke] == ' ':
			if f.glued {
				continue // mysql -p alone prompts; "-p 3306" is another tool's port
			}
			vs, ve, ok = readValue(t, skipBlanks(t, ke), false, false, false)
		case f.glued && ke < len(t) && !isSpace(t[ke]):
			vs, ve, ok = readValue(t, ke, false, false, false)
		}
		if ok && plausibleValue(t[vs:ve], namePassword) {
			sc.add(vs, ve, sc.eng.labelRule("password"))
		}
		return
	}
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// detectOpenSSLPass masks the password of OpenSSL's -passin/-passout/-pass
// pass:PASSWORD argument.
func detectOpenSSLPass(sc *scan, ks, ke int) {
	t := sc.text
	if ks < 1 || t[ks-1] != ' ' {
		return
	}
	if p := strings.LastIndexByte(t[max(0, ks-16):ks-1], ' '); p < 0 || !strings.HasPrefix(t[max(0, ks-16)+p+1:ks-1], "-pass") {
		return
	}
	vs, ve, ok := readValue(t, ke, false, false, false)
	if ok && plausibleValue(t[vs:ve], namePassword) {
		sc.add(vs, ve, sc.eng.labelRule("password"))
	}
}

// detectSQLPassword masks the password of CREATE/ALTER USER or ROLE:
// IDENTIFIED BY 'x', [WITH] [ENCRYPTED] PASSWORD 'x'.
func detectSQLPassword(sc *scan, ks, ke int) {
	t := sc.text
	ls := ks
	for ls > 0 && ks-ls < 300 && !lineSepBefore(t, ls) {
		ls--
	}
	line := strings.ToLower(t[ls:ks])
	if !containsAny(line, []string{"user", "role", "login"}) || !containsAny(line, []string{"create", "alter", "grant", "set "}) {
		return
	}
	k := skipBlanks(t, ke)
	if c := t[ke-1]; c == '\'' || c == '"' {
		k = ke - 1 // the keyword ends on the literal's opening quote
	}
	if k < len(t) && (t[k] == 'E' || t[k] == 'N') && k+1 < len(t) && t[k+1] == '\'' {
		k++ // E'...' and N'...' string literals
	}
	if k >= len(t) || (t[k] != '\'' && t[k] != '"') {
		return
	}
	vs, ve, ok := readValue(t, k, false, false, false)
	if ok && plausibleValue(t[vs:ve], namePassword) {
		sc.add(vs, ve, sc.eng.labelRule("password"))
	}
}

// detectRedisAuth masks the password of Redis's AUTH command and of the
// requirepass and masterauth settings.
func detectRedisAuth(sc *scan, ks, ke int) {
	t := sc.text
	kw := strings.ToLower(t[ks:ke])
	if kw == "auth " {
		// A command: at the start of a line, after a redis-cli prompt
		// ("127.0.0.1:6379> ") or as redis-cli's argument.
		i := ks
		for i > 0 && t[i-1] == ' ' {
			i--
		}
		if !(lineSepBefore(t, i) || (i > 0 && t[i-1] == '>') || strings.HasSuffix(strings.ToLower(t[max(0, i-12):i]), "redis-cli")) {
			return
		}
	} else if ks > 0 && isNameByte(t[ks-1]) {
		return
	}
	k := skipBlanks(t, ke)
	vs, ve, ok := readValue(t, k, false, false, false)
	if !ok {
		return
	}
	if kw == "auth " {
		// AUTH user password (Redis 6 ACLs): the last word is the password.
		if e2 := skipBlanks(t, ve); e2 < len(t) && e2 > ve && t[e2] != '\n' && t[e2] != '\r' {
			if s2, x2, ok2 := readValue(t, e2, false, false, false); ok2 {
				vs, ve = s2, x2
			}
		}
	}
	if plausibleValue(t[vs:ve], namePassword) {
		sc.add(vs, ve, sc.eng.labelRule("password"))
	}
}
