#!/usr/bin/env bash
# Experiment B (Issue 4): Luong local-p general vs RNNsearch on Tatoeba es -> en.
# Usage: experiments/exp_b_train.sh [luong|rnnsearch ...]   Env: WS, STEPS (default 300), TAG (run-name suffix).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/exp-ws-b}
DATA=${DATA:-/work/shared/data}
STEPS=${STEPS:-300}
VALID=${VALID:-$((STEPS / 4))}

if [ ! -f "$WS/workspace.sqlite" ] || ! $PY main.py --workspace "$WS" corpus list | grep -q tatoeba-es-en; then
  # spa.txt is English<TAB>Spanish: the tsv reader's default columns (source = 1) make it es -> en
  $PY main.py --workspace "$WS" corpus import "$DATA/tatoeba-spa-eng/spa.txt" --format tsv \
      --src-lang es --tgt-lang en --name tatoeba-es-en
  # 96/2/2: a 2,379-pair dev set and a 2,379-pair test set (decoding budget on a shared CPU)
  $PY main.py --workspace "$WS" corpus split tatoeba-es-en --seed 1234 --ratios 0.96,0.02,0.02
fi

COMMON=(--corpus tatoeba-es-en --max-steps "$STEPS" --valid-every "$VALID" --threads 1 --quiet)
VARIANTS=("$@")
[ ${#VARIANTS[@]} -eq 0 ] && VARIANTS=(luong rnnsearch)
for v in "${VARIANTS[@]}"; do
  echo "== $v ($(date +%T))"; start=$(date +%s)
  case "$v" in
    luong)     $PY main.py --workspace "$WS" train --preset luong-cpu --name "B-luong-local-p${TAG:-}" "${COMMON[@]}" ;;
    rnnsearch) $PY main.py --workspace "$WS" train --preset bahdanau-cpu --name "B-rnnsearch${TAG:-}" "${COMMON[@]}" ;;
    *) echo "unknown variant $v" >&2; exit 1 ;;
  esac
  echo "== $v took $(( $(date +%s) - start )) s"
done
