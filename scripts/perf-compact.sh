#!/usr/bin/env bash
# perf-compact.sh: time and peak RSS of "compact" (the fallback compaction
# of a long transcript) beside the anchor of issue 16, Python's json.load +
# json.dump of the same file (json.loads + json.dumps per line for JSON
# lines), in one batch. Inputs are generated (scripts/benchgen) into a
# temporary directory and removed afterwards.
#
#   scripts/perf-compact.sh                      # OpenAI JSON, 0.1M 1M 10M 30M tokens
#   INPUTS="claude-code:bytes:1000000000" scripts/perf-compact.sh
#   BINS="old=/tmp/compact-old new=./compact" RUNS=7 scripts/perf-compact.sh
#
# INPUTS: FORMAT:tokens:N or FORMAT:bytes:N, space-separated.
# BINS:   label=path pairs to compare (default: this checkout, built).
# Needs hyperfine and /usr/bin/time (GNU time); prints min/median/max of
# RUNS runs and the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
INPUTS=${INPUTS:-"openai:tokens:100000 openai:tokens:1000000 openai:tokens:10000000 openai:tokens:30000000"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${BINS:-}" ]; then
  go build -o "$work/compact" ./cmd/compact
  BINS="compact=$work/compact"
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
# rss runs a command RUNS times and prints min/median/max peak RSS in MiB.
rss() { for _ in $(seq "$RUNS"); do /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; done | awk '{print $1/1024}' | stats; }
# secs prints min/median/max wall seconds of a hyperfine JSON export.
secs() { python3 -c 'import json,sys; t=sorted(json.load(open(sys.argv[1]))["results"][0]["times"]); n=len(t); m=t[n//2] if n%2 else (t[n//2-1]+t[n//2])/2; print("%.3f %.3f %.3f" % (t[0], m, t[-1]))' "$1"; }

echo "load before: $(uptime | sed 's/.*load average: //')"
printf "%-34s %12s %10s | %-10s %-24s %-24s %-9s %-8s\n" input bytes tokens who "time s (min med max)" "RSS MiB (min med max)" "RSS/byte" "t/anchor"
for spec in $INPUTS; do
  IFS=: read -r fmt kind n <<<"$spec"
  ext=json; case $fmt in *jsonl|claude-code|codex) ext=jsonl ;; esac
  in="$work/$fmt-$kind-$n.$ext"
  gen=$("$work/benchgen" -format "$fmt" "-$kind" "$n" -o "$in")
  size=$(stat -c %s "$in")
  toks=$(sed -n 's/.*~\([0-9]*\) tokens.*/\1/p' <<<"$gen")
  hyperfine -N -w 1 -r "$RUNS" --export-json "$work/py.json" "python3 $work/anchor.py $in $work/out-py" >/dev/null 2>&1
  read -r pmin pmed pmax <<<"$(secs "$work/py.json")"
  read -r rmin rmed rmax <<<"$(rss python3 "$work/anchor.py" "$in" "$work/out-py")"
  printf "%-34s %12d %10s | %-10s %-24s %-24s %-9s %-8s\n" "$(basename "$in")" "$size" "$toks" python "$pmin $pmed $pmax" "$rmin $rmed $rmax" \
    "$(awk -v r="$rmed" -v s="$size" 'BEGIN{printf "%.2f", r*1048576/s}')" "1.00"
  for b in $BINS; do
    label=${b%%=*} bin=${b#*=}
    args=(--summarizer fallback -o "$work/out-c" "$in")
    hyperfine -N -w 1 -r "$RUNS" --export-json "$work/c.json" "$bin ${args[*]}" >/dev/null 2>&1
    read -r cmin cmed cmax <<<"$(secs "$work/c.json")"
    read -r rmin rmed rmax <<<"$(rss "$bin" "${args[@]}")"
    printf "%-34s %12s %10s | %-10s %-24s %-24s %-9s %-8s\n" "" "" "" "$label" "$cmin $cmed $cmax" "$rmin $rmed $rmax" \
      "$(awk -v r="$rmed" -v s="$size" 'BEGIN{printf "%.2f", r*1048576/s}')" "$(awk -v c="$cmed" -v p="$pmed" 'BEGIN{printf "%.2f", c/p}')"
  done
  rm -f "$in"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
