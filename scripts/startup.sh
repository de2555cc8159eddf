#!/usr/bin/env bash
# startup.sh: wall time and peak RSS of tiny commands (count --text, redact,
# inspect on a few bytes), beside gitleaks' start-up as the anchor of issue
# 16, in one batch: min/median/max of RUNS runs.
#
#   scripts/startup.sh                           # this checkout, built
#   BINS="old=/tmp/compact-old new=./compact" GITLEAKS=/tmp/gobin/gitleaks scripts/startup.sh
#
# gitleaks: GOBIN=$(mktemp -d) go install github.com/zricethezav/gitleaks/v8@latest
# (not part of the repository). Needs hyperfine and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${BINS:-}" ]; then
  go build -o "$work/compact" ./cmd/compact
  BINS="compact=$work/compact"
fi
GITLEAKS=${GITLEAKS:-$(command -v gitleaks || true)}
printf 'hello world!' >"$work/tiny.txt"
echo '[{"role":"user","content":"hello world"},{"role":"assistant","content":"hi there"}]' >"$work/tiny.json"

stats() { sort -g | awk '{a[NR]=$1} END {printf "%s %s %s", a[1], (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR]}'; }
rss() { for _ in $(seq "$RUNS"); do /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; done | awk '{printf "%.2f\n", $1/1024}' | stats; }
ms() { python3 -c 'import json,sys; t=sorted(x*1000 for x in json.load(open(sys.argv[1]))["results"][0]["times"]); n=len(t); m=t[n//2] if n%2 else (t[n//2-1]+t[n//2])/2; print("%.1f %.1f %.1f" % (t[0], m, t[-1]))' "$1"; }
row() {
  local label=$1; shift
  hyperfine -N -w 3 -r "$RUNS" --export-json "$work/h.json" "$*" >/dev/null 2>&1
  printf "%-36s %-22s %-22s\n" "$label" "$(ms "$work/h.json")" "$(rss "$@")"
}

echo "load before: $(uptime | sed 's/.*load average: //')"
printf "%-36s %-22s %-22s\n" command "ms (min med max)" "RSS MiB (min med max)"
if [ -n "$GITLEAKS" ]; then
  row "gitleaks version" "$GITLEAKS" version
  row "gitleaks dir tiny.txt" "$GITLEAKS" dir --no-banner "$work/tiny.txt"
fi
for b in $BINS; do
  label=${b%%=*} bin=${b#*=}
  row "$label count --text tiny.txt" "$bin" count --text "$work/tiny.txt"
  row "$label redact tiny.txt" "$bin" redact "$work/tiny.txt"
  row "$label inspect tiny.json" "$bin" inspect "$work/tiny.json"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
