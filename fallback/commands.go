package fallback

import (
	"strings"
	"sync"

	"github.com/compactkit/compact/internal/keyword"
)

// Commands a resuming agent needs again: how the project's tests are run,
// and what was installed into the environment (which outlives the
// conversation). They go under Critical context.
const (
	cmdTest = iota + 1
	cmdInstall
)

// maxKeptCommands bounds the distinct commands of each kind kept.
const maxKeptCommands = 4

// commandKinds returns the segments of a shell command that run tests or
// install packages, each with its kind, as written (without redirections).
// Heredoc bodies are skipped.
func commandKinds(cmd string, fn func(kind int, segment string)) {
	if !commandWordMatcher().Contains(cmd) {
		return // most commands: no word of a test or an install in them
	}
	shellSegments(stripCD(cmd), func(seg string) {
		if seg = dropRedirections(seg); seg == "" {
			return
		}
		if k := segmentKind(shellWords(seg)); k != 0 {
			fn(k, seg)
		}
	})
}

// commandWordMatcher finds the words without which segmentKind finds
// nothing: a cheap first look at every command.
var commandWordMatcher = sync.OnceValue(func() *keyword.Matcher {
	return keyword.New(keyword.Words([]string{"test", "install", "add", "get", "tox", "nox", "jest", "mocha", "rspec", "phpunit",
		"bats", "ava", "karma", "trial", "check", "verify", " i", " ci", "-s", "sync", "pytest", "nose", "run"}), true)
})

// testScript reports a script run as a test runner, whatever the
// project: its name says so (run_tests.py, test_all.py), or it is given a
// "test" sub-command (a project CLI's "x.py test app").
func testScript(argv []string) bool {
	name := strings.ToLower(strings.TrimSuffix(baseName(argv[0]), ".py"))
	if strings.Contains(name, "test") {
		return true
	}
	return len(argv) > 1 && argv[1] == "test"
}

// dropRedirections removes "2>&1", ">/dev/null" and the like from a
// command segment and trims it.
func dropRedirections(seg string) string {
	fields := strings.Fields(seg)
	out := fields[:0]
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "2>&1", f == "&>/dev/null", f == ">/dev/null", f == "2>/dev/null", f == "1>/dev/null":
		case (f == ">" || f == "2>" || f == "&>") && i+1 < len(fields) && fields[i+1] == "/dev/null":
			i++
		default:
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// segmentKind tells whether the words of one simple command run tests or
// install packages.
func segmentKind(words []string) int {
	for len(words) > 0 && (strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") ||
		words[0] == "sudo" || words[0] == "time" || words[0] == "env" || words[0] == "nohup" || words[0] == "exec") {
		words = words[1:]
	}
	if len(words) > 1 && words[0] == "timeout" {
		words = words[2:]
	}
	if len(words) == 0 {
		return 0
	}
	prog := baseName(words[0])
	arg := func(i int) string {
		if i < len(words) {
			return words[i]
		}
		return ""
	}
	switch prog {
	case "pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "bats", "ava", "karma", "nosetests", "trial":
		return cmdTest
	case "python", "python3", "python2", "py", "uv", "poetry", "pipenv", "hatch", "pdm":
		rest := words[1:]
		if prog == "uv" || prog == "poetry" || prog == "pipenv" || prog == "hatch" || prog == "pdm" {
			switch arg(1) {
			case "add":
				return cmdInstall
			case "pip":
				if arg(2) == "install" {
					return cmdInstall
				}
			case "install", "sync":
				return cmdInstall
			case "run":
				return segmentKind(words[2:])
			}
			return 0
		}
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "-m" {
			if (rest[0] == "-W" || rest[0] == "-X") && len(rest) > 1 {
				rest = rest[1:] // the option's argument
			}
			rest = rest[1:]
		}
		if len(rest) >= 2 && rest[0] == "-m" {
			switch rest[1] {
			case "pytest", "unittest", "nose", "nose2", "tox":
				return cmdTest
			case "django":
				if len(rest) > 2 && rest[2] == "test" {
					return cmdTest
				}
			case "pip":
				if len(rest) > 2 && rest[2] == "install" {
					return cmdInstall
				}
			}
			return 0
		}
		if len(rest) > 0 && testScript(rest) {
			return cmdTest
		}
	case "pip", "pip3", "conda", "mamba", "micromamba", "gem", "brew", "apt-get", "apt", "apk", "yum", "dnf", "pacman":
		switch arg(1) {
		case "install", "add", "-S":
			return cmdInstall
		}
	case "npm", "pnpm", "yarn", "bun":
		switch arg(1) {
		case "install", "i", "ci", "add":
			return cmdInstall
		case "test", "t":
			return cmdTest
		case "run", "run-script":
			if strings.HasPrefix(arg(2), "test") {
				return cmdTest
			}
		}
		if prog == "yarn" && strings.HasPrefix(arg(1), "test") {
			return cmdTest
		}
	case "npx", "pnpx", "bunx":
		if k := segmentKind(words[1:]); k == cmdTest {
			return k
		}
	case "go":
		switch arg(1) {
		case "test":
			return cmdTest
		case "get", "install":
			return cmdInstall
		}
	case "cargo":
		switch arg(1) {
		case "test", "nextest":
			return cmdTest
		case "add", "install":
			return cmdInstall
		}
	case "dotnet", "mix", "deno", "swift", "zig", "lein", "sbt", "stack", "cabal", "dart", "flutter":
		if arg(1) == "test" {
			return cmdTest
		}
		if arg(1) == "add" || arg(1) == "install" || arg(1) == "get" && prog != "go" {
			return cmdInstall
		}
	case "make", "gmake", "just", "rake", "ninja":
		for _, w := range words[1:] {
			if w == "test" || w == "check" || strings.HasPrefix(w, "test-") || strings.HasPrefix(w, "test_") {
				return cmdTest
			}
		}
	case "mvn", "gradle", "gradlew", "./gradlew", "./mvnw", "mvnw":
		for _, w := range words[1:] {
			if w == "test" || w == "verify" || w == "check" {
				return cmdTest
			}
		}
	case "bundle":
		if arg(1) == "install" {
			return cmdInstall
		}
		if arg(1) == "exec" {
			return segmentKind(words[2:])
		}
	case "composer":
		if arg(1) == "require" || arg(1) == "install" {
			return cmdInstall
		}
	}
	return 0
}
