#!/usr/bin/env bash
# Experiment G (Issue 18 item 3): evaluate the runs of exp_g_train.sh.
# Usage: experiments/exp_g_eval.sh RUN ...   (RUN or RUN@CHECKPOINT-FILE; e.g. G-sentence G-ws G-tgt; the
#   first is the baseline of the BLEU deltas). Writes to $OUT (default /tmp/g-out):
#   - contrastive.md: accuracy per pronoun on the held-out contrastive set (3,290
#     examples, K = 1), with the previous sentence and with another film's, split by
#     what the previous target sentence says (experiments/contrastive_by_context.py), and
#     the mean gate at the source pronouns of the gated runs;
#   - docbleu.md: document-level BLEU (beam 5) on the held-out Hansards sitting (first
#     MAX_SENT sentences) and the held-out subtitle documents, hypotheses in hyps/.
# Env: WS (/tmp/ws-g), GDATA (/tmp/g-data), OUT (/tmp/g-out), MAX_SENT (400), THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ws-g}; GDATA=${GDATA:-/tmp/g-data}; OUT=${OUT:-/tmp/g-out}
MAX_SENT=${MAX_SENT:-400}; export OMP_NUM_THREADS=${THREADS:-2}
mkdir -p "$OUT"
runs=()
for r in "$@"; do runs+=(--run "$r"); done
start=$(date +%s)
$PY experiments/contrastive_by_context.py "$WS" "$GDATA/contrastive" "$GDATA/contrastive-other-context" \
    "${runs[@]}" --report "$OUT/contrastive.md"
echo "contrastive in $(( $(date +%s) - start )) s"
start=$(date +%s)
$PY experiments/doc_bleu.py "$WS" "${runs[@]}" --max-sentences "$MAX_SENT" --beam 5 \
    --group hansard --group subs --hyps "$OUT/hyps" --report "$OUT/docbleu.md"
echo "document-level BLEU in $(( $(date +%s) - start )) s"
