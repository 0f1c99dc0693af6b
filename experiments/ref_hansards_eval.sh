#!/usr/bin/env bash
# Evaluation of the Hansards en -> fr reference runs (issue 20): test-split sacreBLEU
# (beam 5; --max-sentences MAX of the test split), AER of every attention reading on
# the WPT-03 en-fr trial gold (37 sentences, TALP links, English = source), beside
# eflomal trained on the run's training split (once), and the per-checkpoint drift table.
# A run named *-fren (fr -> en) is scored with French as the gold's source (--swap).
# SYM="FWD REV" also scores the two runs' attention symmetrised (align --reverse-run,
# intersection and grow-diag-final-and, predicting step, with and without the sink).
# Usage: experiments/ref_hansards_eval.sh [RUN ...]   Env: WS, OUT, DATA, MAX (default 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ref-ws-hansards}
OUT=${OUT:-/tmp/ref-out-hansards}
DATA=${DATA:-/work/shared/data}
MAX=${MAX:-1000}
BASELINE=${BASELINE:-1}   # 0: no eflomal (when an earlier call of this script has it)
mkdir -p "$OUT"
RUNS=("$@")
[ ${#RUNS[@]} -eq 0 ] && RUNS=(ref-hansards-luong ref-hansards-guided)
GOLD="$DATA/gold-en-fr-wpt03-trial"
echo "machine: $($PY -c 'from core.train.device import machine_summary; print(machine_summary())'); load $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"

baseline=(--baseline eflomal)
[ "$BASELINE" = 0 ] && baseline=()
for r in "${RUNS[@]}"; do
  gold=(--gold-src "$GOLD/trial.en" --gold-tgt "$GOLD/trial.fr" --gold-links "$GOLD/trial.talp"
        --format talp)
  [[ "$r" == *-fren ]] && gold=(--gold-src "$GOLD/trial.fr" --gold-tgt "$GOLD/trial.en"
        --gold-links "$GOLD/trial.talp" --format talp --swap)
  start=$(date +%s)
  $PY main.py --workspace "$WS" evaluate --run "$r" --test test --beam 5 \
      --max-sentences "$MAX" --report "$OUT/$r-test-bleu.md" > "$OUT/$r-test-bleu.txt"
  echo "$r: evaluate $(( $(date +%s) - start )) s, load $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"
  start=$(date +%s)
  $PY main.py --workspace "$WS" align --run "$r" "${gold[@]}" \
      --reading all --no-sink "${baseline[@]}" \
      --out-dir "$OUT/$r-trial" > "$OUT/$r-aer-trial.md"
  $PY experiments/alignment_drift.py --workspace "$WS" --run "$r" "${gold[@]}" \
      --name wpt03-trial --out "$OUT/$r-drift.md" > /dev/null
  echo "$r: align + drift $(( $(date +%s) - start )) s, load $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"
  baseline=()
done
if [ -n "${SYM:-}" ]; then
  read -r fwd rev <<< "$SYM"
  for h in intersection grow-diag-final-and; do
    for sink in "" --no-sink; do
      $PY main.py --workspace "$WS" align --run "$fwd" --reverse-run "$rev" \
          --gold-src "$GOLD/trial.en" --gold-tgt "$GOLD/trial.fr" \
          --gold-links "$GOLD/trial.talp" --format talp --reading predict $sink \
          --symmetrize "$h" > "$OUT/$fwd-sym-$h${sink}.md"
    done
  done
fi
