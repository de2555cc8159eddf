#!/usr/bin/env bash
# perf-compact.sh: time and peak RSS of "compact" (the fallback compaction
# of a long transcript) beside the anchor of issue 16, Python's json.load +
# json.dump of the same file (json.loads + json.dumps per line for JSON
# lines), in one batch. Inputs are generated (scripts/benchgen) into a
# temporary directory and removed afterwards.
#
#   scripts/perf-compact.sh                      # OpenAI JSON, 0.1M 1M 10M 30M tokens
#   INPUTS="claude-code:bytes:1000000000" scripts/perf-compact.sh
#   INPUTS="codex-rollout:bytes:104857600" scripts/perf-compact.sh   # format's Codex benchmark (needs the corpus)
#   BINS="old=/tmp/compact-old new=./compact" RUNS=7 scripts/perf-compact.sh
#
# INPUTS: FORMAT:tokens:N or FORMAT:bytes:N, space-separated.
# BINS:   label=path pairs to compare (default: this checkout, built).
# Each round runs the anchor and every binary once, one after the other
# (GNU time: wall seconds and peak RSS), so that a change of load hits all
# of them; t/anchor is the median over rounds of each round's ratio.
# Prints min/median/max of RUNS rounds and the load before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
INPUTS=${INPUTS:-"openai:tokens:100000 openai:tokens:1000000 openai:tokens:10000000 openai:tokens:30000000"}
CORPUS=${COMPACT_CORPUS:-../shared/corpus}
ROLLOUT=$CORPUS/transcripts/codex_agentcmd_rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${BINS:-}" ]; then
  # Built under bin/: $work/LABEL holds each label's figures.
  go build -o "$work/bin/compact" ./cmd/compact
  BINS="compact=$work/bin/compact"
fi
go build -o "$work/benchgen" ./scripts/benchgen
cat >"$work/anchor.py" <<'EOF'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
if src.endswith(".jsonl"):
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            if line.strip():
                g.write(json.dumps(json.loads(line)) + "\n")
else:
    with open(src) as f:
        d = json.load(f)
    with open(dst, "w") as g:
        json.dump(d, g)
EOF

# stats prints "min median max" of the numbers on stdin.
stats() { sort -g | awk '{a[NR]=$1} END {printf "%s %s %s", a[1], (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR]}'; }
# measure LABEL CMD...: one run; appends "seconds KiB" to $work/LABEL.
measure() {
  local label=$1; shift
  /usr/bin/time -o "$work/t" -f "%e %M" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t" >>"$work/$label"
}

echo "load before: $(uptime | sed 's/.*load average: //')"
printf "%-30s %11s %9s | %-8s %-20s %-22s %-8s %-8s\n" input bytes tokens who "time s (min med max)" "RSS MiB (min med max)" RSS/byte t/anchor
labels="python"
for b in $BINS; do labels="$labels ${b%%=*}"; done
for spec in $INPUTS; do
  IFS=: read -r fmt kind n <<<"$spec"
  ext=json; case $fmt in *jsonl|claude-code|codex|codex-rollout) ext=jsonl ;; esac
  in="$work/$fmt-$kind-$n.$ext"
  if [ "$fmt" = codex-rollout ]; then
    "$work/benchgen" -codex-rollout "$ROLLOUT" -bytes "$n" -o "$in" >/dev/null
    toks=""
  else
    gen=$("$work/benchgen" -format "$fmt" "-$kind" "$n" -o "$in")
    toks=$(sed -n 's/.*~\([0-9]*\) tokens.*/\1/p' <<<"$gen")
  fi
  size=$(stat -c %s "$in")
  for l in $labels; do : >"$work/$l"; done
  for _ in $(seq "$RUNS"); do
    measure python python3 "$work/anchor.py" "$in" "$work/out-py"
    for b in $BINS; do
      measure "${b%%=*}" "${b#*=}" --summarizer fallback -o "$work/out-c" "$in"
    done
  done
  first=1
  for l in $labels; do
    t=$(awk '{print $1}' "$work/$l" | stats)
    r=$(awk '{printf "%.1f\n", $2/1024}' "$work/$l" | stats)
    rmed=$(awk '{print $2}' <<<"$r")
    ratio=$(paste -d' ' <(awk '{print $1}' "$work/python") <(awk '{print $1}' "$work/$l") | awk '{printf "%.3f\n", $2/$1}' | stats | awk '{print $2}')
    if [ $first = 1 ]; then
      printf "%-30s %11d %9s | " "$(basename "$in")" "$size" "$toks"
      first=0
    else
      printf "%-30s %11s %9s | " "" "" ""
    fi
    printf "%-8s %-20s %-22s %-8s %-8s\n" "$l" "$t" "$r" "$(awk -v r="$rmed" -v s="$size" 'BEGIN{printf "%.2f", r*1048576/s}')" "$ratio"
  done
  rm -f "$in"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
