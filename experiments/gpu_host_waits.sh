#!/usr/bin/env bash
# ON THE GPU MACHINE, from the project root: does a training step still wait for the GPU,
# and what do the pinned batch copies and host-kept lengths (Batch.to, host_lengths) buy?
# Usage: experiments/gpu_host_waits.sh OUT_DIR [BUDGET_S]  (default 500)
# Carries, beside the checkout: .whl-gpu (make gpu-wheels), .peer (see gpu_figures.sh)
# and BASE (default .base: the tree of the commit before the change, e.g.
# `mkdir -p .base && git archive COMMIT core main.py resources/presets pyproject.toml |
# tar -x -C .base`). Writes OUT_DIR/{machine.txt, tests.log, syncs.log, ab.log, paper.log}:
#   1. the CUDA-only tests of the new code (host syncs, the decoder's graphs);
#   2. experiments/gpu_syncs.py: every synchronising call left in a step of the bench
#      model, the Luong paper model and the thesis Transformer (bf16);
#   3. round 1 of the before/after: the bench model (fp32 and bf16 rows) and the thesis
#      Transformer at 65,536-token batches, this tree and BASE's;
#   4. the Luong paper preset (4 x 1000, local-p), its decoder as CUDA graphs (then
#      `--graph-local-p`, now the default) and step by step (--no-decoder-graphs), fp32
#      and bf16 rows;
#   5. round 2 of the before/after, BASE first (ROUNDS=1 leaves it out);
#   6. with CHECK_STEPS=N, make gpu-check's device check on tiny models, N steps a run.
# PAPER_BOTH=0 measures the paper preset with the default decoder only.
set -u
OUT=${1:?usage: gpu_host_waits.sh OUT_DIR [BUDGET_S]}; BUDGET=${2:-500}; BASE=${BASE:-.base}
. "$(dirname "$0")/gpu_common.sh"  # left, stamp, limited; wheels; machine.txt
DATA="$PWD/.peer/tatoeba"
BENCH=(python3 main.py bench train --device cuda --data "$DATA" --split onmt --amp)
{ stamp "CUDA tests"
  limited 120 python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/core/test_host_syncs.py \
    tests/core/test_feed_graphs.py tests/core/test_feed_decoder.py -k "cuda or gpu or wait"; } >> "$OUT/tests.log" 2>&1
{ stamp "synchronising calls"
  limited 60 python3 experiments/gpu_syncs.py "$DATA" luong-global-general luong-paper \
    transformer-thesis rnnsearch --amp
  limited 40 python3 experiments/gpu_syncs.py "$DATA" luong-global-general; } >> "$OUT/syncs.log" 2>&1
ab_round() {  # $1: round number; the trees in order after it
  local round=$1 tree; shift
  for tree in "$@"; do
    { stamp "round $round, code of $tree"
      (cd "$tree" || exit 1
       limited 60 "${BENCH[@]}" --variant luong-global-general --steps 150 --warmup 20
       limited 70 "${BENCH[@]}" --variant transformer-thesis --batch-tokens 65536 \
         --steps 30 --warmup 6); } >> "$OUT/ab.log" 2>&1
  done
}
ab_round 1 . "$BASE"
{ stamp "luong-paper"
  limited 80 "${BENCH[@]}" --variant luong-paper --steps 40 --warmup 8
  [ "${PAPER_BOTH:-1}" = 1 ] && limited 80 "${BENCH[@]}" --variant luong-paper --steps 40 \
    --warmup 8 --no-decoder-graphs
} >> "$OUT/paper.log" 2>&1
(( ${ROUNDS:-2} >= 2 )) && ab_round 2 "$BASE" .
if [ -n "${CHECK_STEPS:-}" ]; then
  { stamp "device check, tiny models"
    limited 150 python3 main.py device-check --device cuda --tiny --steps "$CHECK_STEPS"
    echo "device-check exit status $?"; } >> "$OUT/check.log" 2>&1
fi
stamp end >> "$OUT/ab.log"
tail -n 3 "$OUT"/*.log
