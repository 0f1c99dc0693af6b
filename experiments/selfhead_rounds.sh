#!/usr/bin/env bash
# Alignment with no aligner and no gold anywhere in the chain (issue 45 item 4): two
# unsupervised runs, en -> fr FWD and fr -> en REV, each get an alignment head guided by
# the two runs' own attention links (argmax at the reading --choose-by-anchors picks on
# training pairs, symmetrised grow-diag-final-and; `train --alignment-head --guide-runs`);
# each next round's heads learn from the previous round's heads. Only the report at the
# end reads the WPT-03 trial gold.
# Usage: experiments/selfhead_rounds.sh FWD REV [ROUNDS]   (default 3; heads FWD-selfheadN,
#   REV-selfheadN, HEAD_STEPS updates each, one thread each, the two directions side by
#   side, or one after the other with PARALLEL=0)
# Env: WS (/work/enfr/ws), DATA (../shared/data), OUT ($WS-out), HEAD_STEPS (3000),
#   PARALLEL (1), LOGS, START (1: a later START goes on from the heads of round START - 1).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export WS=${WS:-/work/enfr/ws} THREADS=1
DATA=${DATA:-$(cd .. && pwd)/shared/data}
OUT=${OUT:-$WS-out}; HEAD_STEPS=${HEAD_STEPS:-3000}
mkdir -p "$OUT"
fwd=$1 rev=$2 rounds=${3:-3}
G="$DATA/gold-en-fr-wpt03-trial"
start=${START:-1}
if [ "$start" = 1 ]; then
  for r in "$fwd" "$rev"; do
    $PY main.py --workspace "$WS" align --run "$r" --choose-by-anchors
  done
  teach_fwd=$fwd teach_rev=$rev
else
  teach_fwd=$fwd-selfhead$((start - 1)) teach_rev=$rev-selfhead$((start - 1))
fi
for n in $(seq "$start" "$rounds"); do
  bash experiments/ref_head.sh "$fwd" "$fwd-selfhead$n" --guide-runs "$teach_fwd,$teach_rev" \
      --max-steps "$HEAD_STEPS" &
  [ "${PARALLEL:-1}" = 0 ] && wait
  bash experiments/ref_head.sh "$rev" "$rev-selfhead$n" --guide-runs "$teach_rev,$teach_fwd" \
      --max-steps "$HEAD_STEPS"
  wait
  teach_fwd=$fwd-selfhead$n teach_rev=$rev-selfhead$n
  # the report: each head alone and both symmetrised, on the trial gold
  {
    echo "## round $n ($(date -Is), load $(cat /proc/loadavg))"
    $PY main.py --workspace "$WS" align --run "$teach_fwd" --gold-src "$G/trial.en" \
        --gold-tgt "$G/trial.fr" --gold-links "$G/trial.talp" --format talp --reading head
    $PY main.py --workspace "$WS" align --run "$teach_rev" --gold-src "$G/trial.fr" \
        --gold-tgt "$G/trial.en" --gold-links "$G/trial.talp" --format talp --swap --reading head
    for h in grow-diag-final-and intersection; do
      $PY main.py --workspace "$WS" align --run "$teach_fwd" --reverse-run "$teach_rev" \
          --gold-src "$G/trial.en" --gold-tgt "$G/trial.fr" --gold-links "$G/trial.talp" \
          --format talp --reading head --symmetrize "$h"
    done
  } >> "$OUT/selfhead-rounds.md" 2>&1
done
