#!/usr/bin/env bash
# serve-agents.sh: real agent CLIs through `compact serve`.
#
# Installs Claude Code (@anthropic-ai/claude-code) and Codex CLI
# (@openai/codex) from npm into a temporary directory, starts a scripted
# LLM API on a loopback port (scripts/upstream: it makes the agent run a
# shell command ROUNDS times, then answers with a marker) and `compact serve`
# in front of it with small model windows, and runs each agent on a long
# session through the proxy. It checks that the upstream received compacted
# requests (a handoff, tool calls with their results) and that the agent
# printed the streamed answer, and prints what the proxy did.
#
# Usage: scripts/serve-agents.sh [ROUNDS]      (default 16)
# Needs: go, node and npm (network access to the npm registry only).
# Not part of `go test`: it downloads the CLIs and takes a minute or two.
set -euo pipefail

rounds=${1:-16}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/serve-agents.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "${KEEP:-}" = "" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT
say() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; exit 1; }

say "work directory $work"
say "installing the agent CLIs from npm"
npm install --prefix "$work/npm" --no-audit --no-fund --loglevel=error \
	@anthropic-ai/claude-code @openai/codex >"$work/npm.log" 2>&1 || { cat "$work/npm.log"; fail "npm install"; }
claude="$work/npm/node_modules/.bin/claude"
codex="$work/npm/node_modules/.bin/codex"
echo "claude $("$claude" --version 2>/dev/null)"
echo "$("$codex" --version 2>/dev/null)"

say "building compact and the scripted upstream"
(cd "$root" && go build -o "$work/bin/compact" ./cmd/compact && go build -o "$work/bin/upstream" ./scripts/upstream)

# Small windows, so that a session of a dozen tool calls passes the
# threshold twice: each call prints ~19 KB; Claude Code's system prompt and
# tools alone are ~27k tokens, Codex's ~5k.
cat >"$work/models.toml" <<'EOF'
[[models]]
name = "claude-sonnet-4-5"
window = 120000
output_reserve = 8000

[[models]]
name = "gpt-5-codex"
encoding = "o200k_base"
window = 64000
output_reserve = 4000
EOF

mkdir -p "$work/requests"
"$work/bin/upstream" --listen 127.0.0.1:0 --addr-file "$work/upstream.addr" --dir "$work/requests" \
	--tool-rounds "$rounds" --command "seq 1 4000" --answer "The count is done: FINAL-ANSWER-7f3a." \
	>"$work/upstream.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	[ -s "$work/upstream.addr" ] && break
	sleep 0.1
done
upstream=$(cat "$work/upstream.addr")
"$work/bin/compact" serve --listen 127.0.0.1:0 --models "$work/models.toml" --store "$work/store" \
	--openai-upstream "http://$upstream/v1" --anthropic-upstream "http://$upstream" \
	>"$work/serve.out" 2>"$work/serve.log" &
pids+=($!)
proxy=
for _ in $(seq 100); do
	proxy=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/serve.log" 2>/dev/null || true)
	[ -n "$proxy" ] && break
	sleep 0.1
done
[ -n "$proxy" ] || { cat "$work/serve.log"; fail "compact serve did not start"; }
say "upstream $upstream, proxy $proxy"

# compacted_requests PATTERN: upstream requests of one API that carry a
# handoff; orphans are checked with compact inspect.
check_upstream() {
	local api=$1 n=0 c=0
	for f in "$work"/requests/*"$api".json; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		if grep -q '<<<compact:handoff>>>' "$f"; then
			c=$((c + 1))
			local orphans
			orphans=$("$work/bin/compact" inspect --json "$f" 2>/dev/null | tr -d ' \n' | grep -o '"orphans":\[[^]]*\]' || true)
			case "$orphans" in "" | '"orphans":[]') ;; *) fail "$f: tool pairs split: $orphans" ;; esac
		fi
	done
	echo "$n $c"
}

say "Claude Code: claude -p, $rounds Bash calls"
mkdir -p "$work/claude-project" "$work/home"
(cd "$work/claude-project" && env HOME="$work/home" ANTHROPIC_BASE_URL="$proxy" \
	ANTHROPIC_API_KEY=sk-ant-api03-serve-agents-test-key-not-real DISABLE_TELEMETRY=1 \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
	timeout 300 "$claude" -p "Print the numbers from 1 to 4000 with seq, $rounds times, then say you are done." \
	--allowedTools "Bash(seq:*)" --model claude-sonnet-4-5 >"$work/claude.out" 2>"$work/claude.err") ||
	{ tail -20 "$work/claude.err"; fail "claude exited $?"; }
echo "claude printed: $(tr '\n' ' ' <"$work/claude.out" | cut -c1-200)"
grep -q 'FINAL-ANSWER-7f3a' "$work/claude.out" || fail "Claude Code did not print the streamed answer"
read -r n c <<<"$(check_upstream _v1_messages)"
echo "upstream /v1/messages requests: $n, compacted: $c (tool pairs whole in each)"
[ "$c" -gt 0 ] || fail "no compacted /v1/messages request reached the upstream"

say "Codex CLI: codex exec, $rounds exec_command calls"
mkdir -p "$work/codex-home" "$work/codex-project"
cat >"$work/codex-home/config.toml" <<EOF
model = "gpt-5-codex"
model_provider = "compact"

[model_providers.compact]
name = "compact serve"
base_url = "$proxy/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
EOF
(cd "$work/codex-project" && env HOME="$work/home" CODEX_HOME="$work/codex-home" \
	OPENAI_API_KEY=sk-proj-serve-agents-test-key-not-real \
	timeout 300 "$codex" exec --skip-git-repo-check -s danger-full-access \
	"Print the numbers from 1 to 4000 with seq, $rounds times, then say you are done." \
	>"$work/codex.out" 2>"$work/codex.err") || { tail -20 "$work/codex.err"; fail "codex exited $?"; }
echo "codex printed: $(tr '\n' ' ' <"$work/codex.out" | cut -c1-200)"
grep -q 'FINAL-ANSWER-7f3a' "$work/codex.out" || fail "Codex did not print the streamed answer"
read -r n c <<<"$(check_upstream _v1_responses)"
echo "upstream /v1/responses requests: $n, compacted: $c (tool pairs whole in each)"
[ "$c" -gt 0 ] || fail "no compacted /v1/responses request reached the upstream"

say "what the proxy did (one log line per request)"
python3 - "$work/serve.log" <<'EOF' || true
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("msg") != "request" or r.get("api") == "passthrough":
        continue
    extra = " ".join(f"{k}={r[k]}" for k in ("prefix", "prefix_stable", "warning") if k in r)
    print(f'{r["api"]:9} {r["model"]:18} {r["tokens_before"]:>6} -> {r["tokens_after"]:>6} tokens ({r["counted"]:8})  {r["compaction"]:8} added {r["added_ms"]:6.1f} ms  {extra}')
EOF
curl -s "$proxy/metrics" | grep -E '^compact_serve_(requests_total|prefix_|tokens_|warnings)' || true
if grep -q 'sk-ant-api03-serve-agents\|sk-proj-serve-agents' "$work/serve.log" "$work"/store -r 2>/dev/null; then
	fail "a client API key is in the proxy's log or store"
fi
say "PASS: both agents ran through compact serve, got compacted requests upstream and printed the streamed answer"
