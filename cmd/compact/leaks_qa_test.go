package main

import (
	"strings"
	"testing"
)

// QA-2: a store URL's password reaches stderr when the store cannot be
// opened or is malformed (issue 17, leak 5).
func TestQAStorePasswordNotInErrors(t *testing.T) {
	const pw = "RedisPw55zzQA"
	for _, args := range [][]string{
		{"checkpoint", "list", "--store", "redis://:" + pw + "@127.0.0.1:1/0"},
		{"checkpoint", "verify", "--store", "redis://user:" + pw + "@127.0.0.1:1/0"},
		{"checkpoint", "list", "--store", "redis://user:" + pw + "@127.0.0.1:1/notanumber"},
		{"checkpoint", "list", "--store", "redis://user:" + pw + "@[::1:1/0"},
	} {
		code, stdout, stderr := runCmd(t, "", nil, args...)
		if strings.Contains(stdout+stderr, pw) {
			t.Errorf("%v: exit %d, the password is printed: %s", args, code, stderr)
		}
	}
}
