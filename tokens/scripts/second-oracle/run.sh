#!/usr/bin/env bash
# Second oracle: compare compact's o200k_base and cl100k_base counts with
# npm's tiktoken over the corpus transcripts and seeded random strings, and
# print both sides' throughput. Needs Go and Node (npm fetches tiktoken;
# node_modules stays out of git).
#
#   tokens/scripts/second-oracle/run.sh [-corpus DIR] [-random N] [-seed S]
#
# -corpus defaults to the shared corpus's transcripts,
# ${COMPACT_CORPUS:-../shared/corpus}/transcripts; a relative DIR is taken
# from the repository's root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$here"
[ -d node_modules/tiktoken ] || npm install --no-audit --no-fund --silent
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
(cd "$root" && go run ./tokens/scripts/second-oracle/dump "$@") > "$tmp"
node compare.mjs < "$tmp"
