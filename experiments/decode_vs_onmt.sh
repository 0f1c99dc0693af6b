#!/usr/bin/env bash
# Issue 17 item 3: decoding speed against OpenNMT-py 3.5.1 at a fixed output length, on
# the bench model's size, the same sentences (the first N sources of the bench split),
# greedy and beam 5, batches of 32 (env BATCH=N: N, for both tools), 2 threads;
# alternating rounds in one time window.
# OpenNMT-py decodes a checkpoint of the bench model (e.g. the one equal_budget.sh
# trained); `bench translate` decodes the same architecture (speed does not depend on
# the weights at a fixed length). -max_length_ratio 1000: OpenNMT-py otherwise caps each
# batch at 1.25 x its longest source (its default), below -max_length, and writes about
# 14 tokens a sentence instead of 20. OpenNMT-py's time is its own "Time w/o python
# interpreter load/terminate" (model loading and a cold first batch included, about 1 s);
# its "warm" rate leaves those out, as the workbench's timing does.
# Env SHORTLIST=PER_WORD,FREQUENT: the workbench also decodes over its lexical shortlist
# (bench translate --shortlist), in the same round. Env AMP=1: the workbench also decodes
# in bf16 (bench translate --amp, where the CPU has native bf16). Env INT8=1: the
# workbench also decodes with int8 products (bench translate --int8, as translate --int8);
# Env AVX2=1: both tools run an AVX2-only CPU's kernels on this host (torch's own,
# oneDNN's, MKL's and fbgemm's int8 kernels, which pick theirs from the CPU's flags
# unless FBGEMM_ENABLE_INSTRUCTIONS caps them): what a laptop without AVX-512 runs.
# On the GPU machine (gpu_figures.sh runs it so): DEVICE=cuda decodes on the GPU with both
# tools (onmt_translate -gpu 0, bench translate --device cuda); DATA=DIR names the bench
# split, ONMT=PATH the onmt_translate to run, PY the workbench's Python.
# Usage: experiments/decode_vs_onmt.sh ONMT_CHECKPOINT [N] [LENGTH] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
CKPT=$1; N=${2:-1000}; L=${3:-20}; ROUNDS=${4:-2}; B=${BATCH:-32}
PY=${PY:-.venv/bin/python}
PEERS=${PEERS:-$HOME/.cache/nmt-peers}
D=${DATA:-$PEERS/tatoeba-es-en}; ONMT=${ONMT:-$PEERS/venv-onmt/bin/onmt_translate}
if [ "${AVX2:-0}" = 1 ]; then
  export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
         FBGEMM_ENABLE_INSTRUCTIONS=AVX2
fi
DEVICE=${DEVICE:-cpu}; ONMT_GPU=(); [ "$DEVICE" = cuda ] && ONMT_GPU=(-gpu 0)
W=$(mktemp -d)
# the bench split's first N sources: train pairs of <= 50 tokens a side, in file order
paste "$D/train.tok.es" "$D/train.tok.en" \
  | awk -F'\t' -v n="$N" '{ns=split($1,a," "); nt=split($2,b," ");
      if (ns>0 && ns<=50 && nt>0 && nt<=50 && k<n) {print $1; k++}}' > "$W/src.es"
echo "# $($PY -c 'from core.train.device import machine_summary; print(machine_summary())')"
echo "# $N sentences, output fixed at $L tokens, batch $B, 2 threads, $DEVICE; load $(cat /proc/loadavg)"
[ "${AVX2:-0}" = 1 ] && echo "# AVX2-only kernels: ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 FBGEMM_ENABLE_INSTRUCTIONS=AVX2"
head -"$B" "$W/src.es" > "$W/first.es"
onmt() {  # onmt() SRC BEAM -> seconds by OpenNMT-py's own clock; output in $W/out.en
  TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 OMP_NUM_THREADS=2 "$ONMT" -model "$CKPT" "${ONMT_GPU[@]}" \
      -src "$1" -output "$W/out.en" -beam_size "$2" -batch_size "$B" \
      -min_length "$L" -max_length "$L" -max_length_ratio 1000 > "$W/log" 2>&1 \
    || { tail -n 5 "$W/log" >&2; echo failed; return 0; }  # the workbench's rows still run
  grep -o 'interpreter load/terminate: *[0-9.]*' "$W/log" | grep -o '[0-9.]*$'
}
for round in $(seq "$ROUNDS"); do
  for beam in 1 5; do
    # its clock includes loading the model and a cold first batch (about 1 s, where the
    # workbench's timing starts after a warm-up batch): "warm" leaves them out, as the
    # time of all N minus the time of the first batch alone, over the other N - B
    first=$(onmt "$W/first.es" "$beam")
    secs=$(onmt "$W/src.es" "$beam")
    if [ "$first" = failed ] || [ "$secs" = failed ]; then
      echo "round $round  onmt       beam $beam  failed (its log's tail above)"; continue
    fi
    tokens=$(awk '{n+=NF} END{print n}' "$W/out.en")
    awk -v r="$round" -v b="$beam" -v s="$secs" -v f="$first" -v n="$N" -v t="$tokens" -v bs="$B" \
        'BEGIN{printf "round %s  onmt       beam %s  %7.1f sent/s  %8.0f tgt tok/s  (%s s, %d tokens); warm %7.1f sent/s\n", r, b, n/s, t/s, s, t, (n-bs)/(s-f)}'
  done
  $PY main.py bench translate --data "$D" --split onmt --sentences "$N" --length "$L" \
      --beam 1 --beam 5 --batch "$B" --threads 2 --device "$DEVICE" ${SHORTLIST:+--shortlist "$SHORTLIST"} \
      ${AMP:+--amp} ${INT8:+--int8} 2>&1 | sed "s/^/round $round  workbench  /"
done
echo "# done, load $(cat /proc/loadavg)"
rm -rf "$W"
