#!/usr/bin/env bash
# eval.sh scores "compact redact" on the shared evaluation corpus through the
# CLI, as the corpus's own eval.py does (one process per case), and fails
# below 95% strict recall or above 1% false positives (MIN_RECALL and
# MAX_FP set other goals). Run from anywhere:
#   redact/eval.sh [CORPUS]
# The labelled corpus and its scorer are in the shared corpus, outside this
# repository: ${COMPACT_CORPUS:-../shared/corpus}/redact, a relative path
# taken from the repository's root. CORPUS defaults to its corpus.jsonl
# (gen.py --seed 1); pass one written by its gen.py --seed N --out FILE to
# check generalisation, or the generated set of a seed:
#   go run ./redact/casegen/cmd/casegen -seed N -o cases.jsonl
#   MIN_RECALL=99 MAX_FP=0.5 redact/eval.sh cases.jsonl
set -euo pipefail
min_recall="${MIN_RECALL:-95}"
max_fp="${MAX_FP:-1}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
shared="${COMPACT_CORPUS:-../shared/corpus}"
case "$shared" in /*) ;; *) shared="$root/$shared" ;; esac
data="$shared/redact"
[ -f "$data/eval.py" ] || {
  echo "eval.sh: no redaction corpus at $data (put the shared corpus at ../shared/corpus beside the repository, or set COMPACT_CORPUS)" >&2
  exit 1
}
corpus="${1:-$data/corpus.jsonl}"
command -v python3 >/dev/null || { echo "eval.sh: python3 is required" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/compact" ./cmd/compact)

python3 "$data/eval.py" --corpus "$corpus" --cmd "$tmp/compact redact" \
  --name "compact redact" --json "$tmp/summary.json"

python3 - "$tmp/summary.json" "$min_recall" "$max_fp" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
min_recall, max_fp = float(sys.argv[2]), float(sys.argv[3])
recall = 100.0 * s["pos_caught_strict"] / s["pos_secrets"]
fp = 100.0 * s["neg_fp"] / s["neg_cases"]
keep = 100.0 * s["pos_keep_ok"] / s["pos_keep"]
print("eval.sh: strict recall %.2f%% (goal >= %g%%), false positives %.2f%% (goal <= %g%%), keep survival %.2f%%" % (recall, min_recall, fp, max_fp, keep))
if recall < min_recall or fp > max_fp:
    print("eval.sh: FAIL", file=sys.stderr)
    sys.exit(1)
PY
