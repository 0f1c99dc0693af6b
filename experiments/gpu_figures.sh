#!/usr/bin/env bash
# ON THE GPU MACHINE, from the project root: issue 17's GPU figures in one command, each
# step under its own time limit so that one slow step cannot take the others' time.
# Usage: experiments/gpu_figures.sh OUT_DIR [BUDGET_S]   (default 540: a device command's
# 600 s less the start; no step runs past it, and a step with under 20 s left is skipped)
# Needs, carried beside the checkout (see docs/benchmarks.md, "GPU"): .whl-gpu (make
# gpu-wheels), .whl-onmt and .peer (../shared/bench/onmt-gpu/README.md).
# Writes OUT_DIR/{machine.txt, cudatests.log, peer.log, bench.log, thesis.log, decode.log,
# check.log, paper.log, profile.log}, the steps in the order of what a lease must not miss:
#   1. the CUDA-only tests of the suite (every test that needs a GPU), then make
#      gpu-check's device check (every path, CHECK_STEPS steps a training run, default
#      200): the final code's CUDA paths before any figure;
#   2. ROUNDS times (default 1): OpenNMT-py and bench train on the bench model (fp32 and
#      bf16; with the input-feeding decoder's CUDA graphs, the default, and, unless
#      STEP_GRAPH=0, without: --no-decoder-graphs); then the thesis Transformer at each
#      of THESIS_BATCHES tokens a batch (default 32,768), fp32 and bf16 rows, with the
#      GPU's utilisation; with BASE=DIR (an older commit's tree, e.g. `mkdir -p DIR &&
#      git archive COMMIT core main.py resources/presets pyproject.toml | tar -x -C
#      DIR`; carried with the checkout) the same thesis rows from DIR's code, in
#      alternating order (this tree first in odd rounds, DIR first in even ones): a
#      before/after in one lease;
#   2b. unless DECODE=0: decoding on the GPU against OpenNMT-py (decode_vs_onmt.sh with
#      DEVICE=cuda: sentences at 20 tokens, greedy and beam 5, DECODE_BATCH
#      sentences a batch for both, default 64; DECODE_N sentences, default 1,000, under
#      DECODE_CAP seconds, default 120), the peer decoding the checkpoint its training run
#      of step 2 saved;
#   3. Luong et al.'s 4 x 1000 (luong-paper) at its batch of 128, its local-p decoder as
#      CUDA graphs (the default) and as the step-by-step graph (--no-decoder-graphs),
#      PAPER=0 leaves it out, PAPER_STEP=0 the step-by-step row;
#   4. unless PROFILES=0, bench train --profile of the bench model and the thesis
#      Transformer (bf16 rows included): kernel time, launches and the top kernels a step.
set -u
OUT=${1:?usage: gpu_figures.sh OUT_DIR [BUDGET_S]}; BUDGET=${2:-540}
. "$(dirname "$0")/gpu_common.sh"  # left, stamp, limited; wheels; machine.txt
DEVICE=${DEVICE:-cuda}
# absolute: BASE's rows run from inside BASE
BENCH=(python3 main.py bench train --device "$DEVICE" --data "$PWD/.peer/tatoeba" --split onmt --amp)
{ stamp "CUDA-only tests"
  limited 120 python3 -m pytest -q -p no:cacheprovider -o addopts="" \
    tests/core/test_feed_decoder.py::test_fused_decoder_on_a_gpu_matches_the_step_graph \
    tests/core/test_feed_graphs.py tests/core/test_host_syncs.py \
    tests/core/test_beam_host_reads.py::test_a_gpu_beam_step_waits_for_the_gpu_once \
    tests/core/test_jobs_and_checkpoints.py::test_resume_on_cuda_restores_the_generators \
    tests/core/test_distributed.py::test_torchrun_with_nccl_creates_one_run_and_trains; } \
    >> "$OUT/cudatests.log" 2>&1
{ stamp "device check"
  limited 240 python3 main.py device-check --device "$DEVICE" --steps "${CHECK_STEPS:-200}"
  echo "device-check exit status $?"; } >> "$OUT/check.log" 2>&1
for round in $(seq 1 "${ROUNDS:-1}"); do
  { stamp "peer round $round"
    # its run folder (mktemp) under /tmp/peer-runs, where step 2b finds the checkpoint
    mkdir -p /tmp/peer-runs
    TMPDIR=/tmp/peer-runs limited 100 bash .peer/bench/onmt-gpu/run-gpu.sh .whl-onmt .peer/tatoeba 400
  } >> "$OUT/peer.log" 2>&1
  { stamp "workbench round $round"
    limited 100 "${BENCH[@]}" --variant luong-global-general --steps 200 --warmup 30
    [ "${STEP_GRAPH:-1}" = 1 ] && limited 100 "${BENCH[@]}" --variant luong-global-general \
      --steps 200 --warmup 30 --no-decoder-graphs; } >> "$OUT/bench.log" 2>&1
  for tokens in ${THESIS_BATCHES:-32768}; do
    trees=(.); [ -n "${BASE:-}" ] && trees=(. "$BASE")
    (( round % 2 == 0 )) && [ -n "${BASE:-}" ] && trees=("$BASE" .)
    for tree in "${trees[@]}"; do
      { stamp "thesis Transformer, $tokens-token batches, round $round, code of $tree"
        (cd "$tree" && limited 100 "${BENCH[@]}" --variant transformer-thesis \
          --batch-tokens $tokens --steps 60 --warmup 10); } >> "$OUT/thesis.log" 2>&1
    done
  done
done
if [ "${DECODE:-1}" = 1 ]; then
  { stamp "decoding against OpenNMT-py on the GPU"
    ckpt=$(ls /tmp/peer-runs/*/model_step_*.pt 2>/dev/null | head -n 1)
    # onmt_translate as the GPU image can run it: the carried wheels and the stubs
    printf '#!/usr/bin/env bash\nPYTHONPATH=/tmp/onmt-site:%s exec python3 -c %s "$@"\n' \
      "$PWD/.peer/bench/onmt-gpu/stubs" \
      "'import sys; from onmt.bin.translate import main; sys.argv[0] = \"onmt_translate\"; main()'" \
      > /tmp/onmt_translate && chmod +x /tmp/onmt_translate
    if [ -n "$ckpt" ]; then
      DEVICE="$DEVICE" DATA="$PWD/.peer/tatoeba" ONMT=/tmp/onmt_translate PY=python3 \
        BATCH="${DECODE_BATCH:-64}" limited "${DECODE_CAP:-120}" bash experiments/decode_vs_onmt.sh \
          "$ckpt" "${DECODE_N:-1000}" 20 1
    else echo "no OpenNMT-py checkpoint under /tmp/peer-runs: its training run failed"; fi
  } >> "$OUT/decode.log" 2>&1
fi
if [ "${PAPER:-1}" = 1 ]; then
  { stamp "luong-paper"
    limited 100 "${BENCH[@]}" --variant luong-paper --steps 40 --warmup 8
    [ "${PAPER_STEP:-1}" = 1 ] && limited 100 "${BENCH[@]}" --variant luong-paper --steps 40 \
      --warmup 8 --no-decoder-graphs
  } >> "$OUT/paper.log" 2>&1
fi
# where a step's time goes (kernels, launches, busy share), for the next change
[ "${PROFILES:-1}" = 1 ] && { stamp "profiles"
  limited 100 "${BENCH[@]}" --variant luong-global-general --steps 20 --warmup 10 --profile 5
  limited 100 "${BENCH[@]}" --variant transformer-thesis --batch-tokens 32768 --steps 10 \
    --warmup 5 --profile 3
  stamp end; } >> "$OUT/profile.log" 2>&1
tail -n 4 "$OUT"/*.log
