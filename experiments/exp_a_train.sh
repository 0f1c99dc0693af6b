#!/usr/bin/env bash
# Experiment A (Issue 4): attention variants on the first 100,000 Hansards pairs (en -> fr),
# trained through the product CLI. Usage: experiments/exp_a_train.sh [VARIANT...]
# Env: WS (workspace, default /tmp/exp-ws-a), STEPS (default 160), DATA (shared data root).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/exp-ws-a}
DATA=${DATA:-/work/shared/data}
STEPS=${STEPS:-120}
VALID=${VALID:-40}
TMP=${TMP_DATA:-/tmp/exp-ws-data}

if [ ! -f "$WS/workspace.sqlite" ] || ! $PY main.py --workspace "$WS" corpus list | grep -q hansards100k; then
  mkdir -p "$TMP"
  head -100000 "$DATA/hansards-en-fr-300k/train.en" > "$TMP/h100k.en"
  head -100000 "$DATA/hansards-en-fr-300k/train.fr" > "$TMP/h100k.fr"
  $PY main.py --workspace "$WS" corpus import "$TMP/h100k.en" "$TMP/h100k.fr" \
      --format parallel --src-lang en --tgt-lang fr --name hansards100k
  # a 2,000-pair dev set keeps each validation affordable on a shared 2-core CPU
  $PY main.py --workspace "$WS" corpus split hansards100k --seed 1234 --ratios 0.97,0.02,0.01
fi

COMMON=(--corpus hansards100k --set model.layers=1 --set model.hidden_size=256
        --set data.pretokenized=true --set data.src_vocab_size=20000 --set data.tgt_vocab_size=20000
        --max-steps "$STEPS" --valid-every "$VALID" --threads 1 --quiet)

train_variant() {
  case "$1" in
    global-dot)      $PY main.py --workspace "$WS" train --preset luong-cpu --name A-global-dot \
                       --set model.attention=global --set model.score=dot "${COMMON[@]}" ;;
    global-general)  $PY main.py --workspace "$WS" train --preset luong-cpu --name A-global-general \
                       --set model.attention=global --set model.score=general "${COMMON[@]}" ;;
    global-location) $PY main.py --workspace "$WS" train --preset luong-cpu --name A-global-location \
                       --set model.attention=global --set model.score=location "${COMMON[@]}" ;;
    local-m-general) $PY main.py --workspace "$WS" train --preset luong-cpu --name A-local-m-general \
                       --set model.attention=local-m --set model.score=general "${COMMON[@]}" ;;
    local-p-general) $PY main.py --workspace "$WS" train --preset luong-cpu --name A-local-p-general \
                       --set model.attention=local-p --set model.score=general "${COMMON[@]}" ;;
    rnnsearch)       $PY main.py --workspace "$WS" train --preset bahdanau-cpu --name A-rnnsearch \
                       "${COMMON[@]}" ;;
    *) echo "unknown variant $1" >&2; exit 1 ;;
  esac
}

VARIANTS=("$@")
[ ${#VARIANTS[@]} -eq 0 ] && VARIANTS=(global-dot global-general global-location local-m-general local-p-general rnnsearch)
for v in "${VARIANTS[@]}"; do
  echo "== $v ($(date +%T))"
  start=$(date +%s)
  train_variant "$v"
  echo "== $v took $(( $(date +%s) - start )) s"
done
