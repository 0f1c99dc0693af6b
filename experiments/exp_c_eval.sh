#!/usr/bin/env bash
# Experiment C evaluation: document-level BLEU (Table 5.5 layout) on a prefix of the test
# document, and contrastive pronoun accuracy (evaluate --contrastive) on a lowercased,
# Moses-tokenised copy of Bawden's set (every EVERY-th example).
# Env: WS, OUT, MAXSENT (default 200), EVERY (default 7 -> 2,000 examples).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/exp-ws-c}
DATA=${DATA:-/work/shared/data}
OUT=${OUT:-/tmp/exp-ws-out}
TMP=${TMP_DATA:-/tmp/exp-ws-data}
MAXSENT=${MAXSENT:-200}
EVERY=${EVERY:-7}
mkdir -p "$OUT"
RUNS=(C-transformer C-concat C-context-ws C-context-ts)
$PY experiments/runs_table.py "$WS" --prefix C- > "$OUT/C-runs.md"
cat "$OUT/C-runs.md"
args=(); for r in "${RUNS[@]}"; do args+=(--run "$r"); done
$PY experiments/doc_bleu.py "$WS" "${args[@]}" --max-sentences "$MAXSENT" --beam 5 \
    --report "$OUT/C-docbleu.md"
CON="$TMP/contra-every$EVERY"
[ -s "$CON/OpenSubs.c1.context.trg" ] || \
  $PY experiments/prep_contrastive.py "$DATA/contrastive-pronoun-en-fr" "$CON" --every "$EVERY" --k 1
for r in "${RUNS[@]}"; do
  $PY main.py --workspace "$WS" evaluate --run "$r" --contrastive "$CON" --k 1 \
      --report "$OUT/$r.contrastive.md"
done
