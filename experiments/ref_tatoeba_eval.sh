#!/usr/bin/env bash
# Evaluation of the Tatoeba reference runs (issue 20): test-set sacreBLEU (beam 5), AER of
# every attention reading on the bundled demo gold (es-en, 56 pairs, our own sentences)
# and on the INESC en-es gold (100 Europarl pairs, lowercased), beside eflomal trained on
# the run's training split, and the per-checkpoint drift table.
# Usage: experiments/ref_tatoeba_eval.sh [RUN ...]   Env: WS, OUT, DATA.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ref-ws}
OUT=${OUT:-/tmp/ref-out}
DATA=${DATA:-/work/shared/data}
mkdir -p "$OUT"
RUNS=("$@")
[ ${#RUNS[@]} -eq 0 ] && RUNS=(ref-tatoeba-luong ref-tatoeba-rnnsearch ref-tatoeba-guided)
INESC="$DATA/gold-en-es-inesc"
echo "machine: $($PY -c 'from core.train.device import machine_summary; print(machine_summary())'); load $(cat /proc/loadavg)" | tee "$OUT/machine.txt"

run_args=()
for r in "${RUNS[@]}"; do run_args+=(--run "$r"); done
start=$(date +%s)
$PY main.py --workspace "$WS" evaluate "${run_args[@]}" --test test --beam 5 \
    --report "$OUT/test-bleu.md" > "$OUT/test-bleu.txt"
# the 459 demo pairs: our own sentences, never seen by a Tatoeba model
$PY main.py --workspace "$WS" evaluate "${run_args[@]}" --src resources/demo/demo.es \
    --ref resources/demo/demo.en --beam 5 --report "$OUT/demo-bleu.md" > "$OUT/demo-bleu.txt"
echo "evaluate: $(( $(date +%s) - start )) s" | tee -a "$OUT/machine.txt"

baseline=(--baseline eflomal)  # eflomal once per gold set: the runs share the corpus
for r in "${RUNS[@]}"; do
  start=$(date +%s)
  # the demo gold set: Spanish source, English target, links source-first, 0-based
  $PY main.py --workspace "$WS" align --run "$r" --gold-src resources/demo/gold.es \
      --gold-tgt resources/demo/gold.en --gold-links resources/demo/gold.links \
      --reading all --no-sink "${baseline[@]}" \
      --out-dir "$OUT/$r-demo" > "$OUT/$r-aer-demo.md"
  # INESC: English-first links; the run translates es -> en, so Spanish is the source
  $PY main.py --workspace "$WS" align --run "$r" --gold-src "$INESC/tgt.es" \
      --gold-tgt "$INESC/src.en" --gold-links "$INESC/align.0idx.pharaoh" --swap \
      --reading all --no-sink "${baseline[@]}" \
      --out-dir "$OUT/$r-inesc" > "$OUT/$r-aer-inesc.md"
  $PY experiments/alignment_drift.py --workspace "$WS" --run "$r" \
      --gold-src resources/demo/gold.es --gold-tgt resources/demo/gold.en \
      --gold-links resources/demo/gold.links --name demo-gold --out "$OUT/$r-drift.md" > /dev/null
  echo "$r: align + drift $(( $(date +%s) - start )) s" | tee -a "$OUT/machine.txt"
  baseline=()
done
