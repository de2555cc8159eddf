package redact

import "strings"

// detectTerraformVariable masks the default of a Terraform variable whose
// block says it is sensitive (sensitive = true) or whose name is
// secret-like:
//
//	variable "db_password" {
//	  type    = string
//	  default = "..."
//	}
//
// The value sits under "default", a name that says nothing; the block's
// label and its sensitive flag do.
func detectTerraformVariable(sc *scan, ks, ke int) {
	t := sc.text
	if ks > 0 && !lineSepBefore(t, ks-indentBefore(t, ks)) {
		return
	}
	q := strings.IndexByte(t[ke:min(len(t), ke+128)], '"')
	if q <= 0 {
		return
	}
	name := t[ke : ke+q]
	k := skipSpaceNL(t, ke+q+1)
	if k >= len(t) || t[k] != '{' {
		return
	}
	end := blockEnd(t, k)
	sc.skipTo(sc.curRule, end)
	block := t[k:end]
	class, label := classifyName(name)
	if sensitiveBlock(block) && !describesSecret(name) {
		if class == nameNone || class == nameWeak {
			class, label = nameSecret, "secret"
		}
	}
	if class == nameNone {
		return
	}
	for off := 0; off < len(block); {
		i := strings.Index(block[off:], "default")
		if i < 0 {
			return
		}
		at := k + off + i
		off += i + len("default")
		if !lineSepBefore(t, at-indentBefore(t, at)) {
			continue
		}
		j := skipBlanks(t, at+len("default"))
		if j >= len(t) || t[j] != '=' {
			continue
		}
		j = skipBlanks(t, j+1)
		if j >= len(t) || t[j] != '"' {
			return // a heredoc (a PEM body has its own detector), a list, a map
		}
		vs, ve, ok := readValue(t, j, false, false, false)
		if ok && ve <= end && plausibleValue(t[vs:ve], class) {
			sc.add(vs, ve, sc.eng.labelRule(label))
		}
		return
	}
}

// metaWords end names of what describes a secret rather than holds it:
// its hash, id, expiry, location.
var metaWords = set("hash", "hashed", "digest", "fingerprint", "checksum", "sha", "sha1", "sha256", "sha512", "md5", "id", "ids",
	"name", "names", "type", "expiry", "expires", "expiration", "at", "version", "ttl", "length", "region", "owner", "scope",
	"scopes", "issuer", "url", "uri", "endpoint", "path", "file", "dir", "arn", "enabled", "count", "policy", "rotation")

// describesSecret reports a name whose last word says it describes a
// secret (db_password_hash, api_key_expires_at, token_path).
func describesSecret(name string) bool {
	words := splitWords(name)
	return len(words) > 0 && metaWords[words[len(words)-1]]
}

// sensitiveBlock reports "sensitive = true" in a Terraform block.
func sensitiveBlock(block string) bool {
	for off := 0; off < len(block); {
		i := strings.Index(block[off:], "sensitive")
		if i < 0 {
			return false
		}
		j := skipBlanks(block, off+i+len("sensitive"))
		off += i + len("sensitive")
		if j < len(block) && block[j] == '=' && strings.HasPrefix(block[skipBlanks(block, j+1):], "true") {
			return true
		}
	}
	return false
}

// blockEnd returns the end of the brace block opening at t[k] ('{'),
// skipping strings, bounded to 4 KiB.
func blockEnd(t string, k int) int {
	depth := 0
	limit := min(len(t), k+4096)
	for i := k; i < limit; i++ {
		switch t[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i + 1
			}
		case '"':
			for i++; i < limit && t[i] != '"' && t[i] != '\n'; i++ {
				if t[i] == '\\' {
					i++
				}
			}
		}
	}
	return limit
}
