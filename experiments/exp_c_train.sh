#!/usr/bin/env bash
# Experiment C (Issue 6): sentence-level Transformer vs concat vs context Transformer
# (WS, and TS stage 2 initialised from the Transformer) on Hansards documents, en -> fr.
# Usage: experiments/exp_c_train.sh [transformer|concat|ws|ts ...]  (ts needs transformer)
# Env: WS, STEPS (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/exp-ws-c}
DATA=${DATA:-/work/shared/data}
STEPS=${STEPS:-150}
VALID=${VALID:-$((STEPS / 2))}
TMP=${TMP_DATA:-/tmp/exp-ws-data}

if [ ! -f "$WS/workspace.sqlite" ] || ! $PY main.py --workspace "$WS" corpus list | grep -q hansards-docs; then
  mkdir -p "$TMP"
  H="$DATA/hansards-en-fr-300k"
  # the first 22 whole sittings (documents): every line before document 023 (58,264 lines)
  n=$(( $(grep -n "debates.023	0$" "$H/train.docids" | cut -d: -f1) - 1 ))
  head -$n "$H/train.en" > "$TMP/h60k.en"; head -$n "$H/train.fr" > "$TMP/h60k.fr"
  head -$n "$H/train.docids" > "$TMP/h60k.docids"
  $PY main.py --workspace "$WS" corpus import "$TMP/h60k.en" "$TMP/h60k.fr" --format parallel \
      --docids "$TMP/h60k.docids" --src-lang en --tgt-lang fr --name hansards-docs
  # documents kept whole: one sitting each for dev (3,643 pairs) and test (3,836 pairs)
  $PY main.py --workspace "$WS" corpus split hansards-docs --seed 1234 --ratios 0.9,0.05,0.05
fi

COMMON=(--corpus hansards-docs --set data.pretokenized=true --max-steps "$STEPS"
        --valid-every "$VALID" --threads 1 --quiet)
VARIANTS=("$@")
[ ${#VARIANTS[@]} -eq 0 ] && VARIANTS=(transformer concat ws ts)
for v in "${VARIANTS[@]}"; do
  echo "== $v ($(date +%T))"; start=$(date +%s)
  case "$v" in
    transformer) $PY main.py --workspace "$WS" train --preset transformer-cpu --name C-transformer "${COMMON[@]}" ;;
    concat)      $PY main.py --workspace "$WS" train --preset concat-cpu --name C-concat "${COMMON[@]}" ;;
    ws)          $PY main.py --workspace "$WS" train --preset context-ws-cpu --name C-context-ws "${COMMON[@]}" ;;
    ts)          $PY main.py --workspace "$WS" train --preset context-ts-cpu --name C-context-ts \
                   --init-from C-transformer "${COMMON[@]}" ;;
    *) echo "unknown variant $v" >&2; exit 1 ;;
  esac
  echo "== $v took $(( $(date +%s) - start )) s"
done
