#!/usr/bin/env bash
# Experiment A evaluation: attention AER (forced decoding of the gold references, argmax
# links; `align` CLI) of each A-* run on the WPT-03 trial gold set, plus eflomal.
# Usage: experiments/exp_a_eval.sh [RUN ...]   Env: WS, OUT (default /tmp/exp-ws-out).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/exp-ws-a}
DATA=${DATA:-/work/shared/data}
OUT=${OUT:-/tmp/exp-ws-out}
TMP=${TMP_DATA:-/tmp/exp-ws-data}
G="$DATA/gold-en-fr-wpt03-trial"
mkdir -p "$OUT"
RUNS=("$@")
[ ${#RUNS[@]} -eq 0 ] && RUNS=(A-global-dot A-global-general A-global-location A-local-m-general
                              A-local-p-general A-rnnsearch)
for r in "${RUNS[@]}"; do
  # the gold text is used as released: the same tokenisation and casing as the training text
  # (English source first, so the TALP links are (src, tgt) without --swap)
  $PY main.py --workspace "$WS" align --run "$r" --gold-src "$G/trial.en" --gold-tgt "$G/trial.fr" \
      --gold-links "$G/trial.talp" --format talp --method argmax --out-dir "$OUT/$r" > "$OUT/$r.aer.md"
  cat "$OUT/$r.aer.md"
done
if [ ! -s "$OUT/A-eflomal.md" ] && [ -z "${SKIP_EFLOMAL:-}" ]; then
  $PY experiments/eflomal_aer.py "$TMP/h100k.en" "$TMP/h100k.fr" "$G" --out-dir "$OUT/A-eflomal" \
      > "$OUT/A-eflomal.md"
fi
cat "$OUT/A-eflomal.md"
$PY experiments/runs_table.py "$WS" --prefix A- > "$OUT/A-runs.md"
cat "$OUT/A-runs.md"
