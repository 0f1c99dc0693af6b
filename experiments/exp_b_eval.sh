#!/usr/bin/env bash
# Experiment B evaluation: both systems side by side on the stored test split (beam 5):
# sacreBLEU (+ signature), chrF, TER, tokenized BLEU, forced perplexity, BLEU by length.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/exp-ws-b}
OUT=${OUT:-/tmp/exp-ws-out}
mkdir -p "$OUT"
$PY main.py --workspace "$WS" evaluate --run "B-luong-local-p${TAG:-}" --run "B-rnnsearch${TAG:-}" --test test \
    --beam 5 --report "$OUT/B-eval${TAG:-}.md"
$PY experiments/runs_table.py "$WS" --prefix B- > "$OUT/B-runs.md"
cat "$OUT/B-runs.md"
