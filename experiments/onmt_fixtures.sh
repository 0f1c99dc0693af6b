#!/usr/bin/env bash
# Issue 49: small OpenNMT-py 3.5.1 checkpoints of the kinds `runs import` reads, each
# with OpenNMT-py's own outputs on the first N test sentences of the Tatoeba es->en bench
# split, for tests/core/test_onmt_import.py to match:
#   - gold scores: onmt_translate -tgt -verbose ("GOLD SCORE: x" per sentence),
#   - beam-5 translations with their scores: -beam_size 5 -verbose (beam5.txt, beam5.log.gz),
#   - greedy translations with their attention: -attn_debug, 7 decimals (greedy.txt,
#     greedy.log.gz).
# The kinds (OpenNMT-py options), between them every option `runs import` maps:
#   lstm-general-feed   rnn_type LSTM, 2 layers, global_attention general, input_feed 1
#   lstm-brnn-mlp       rnn_type LSTM, brnn, 2 layers, global_attention mlp, input_feed 1
#   lstm-dot-std        rnn_type LSTM, 1 layer, global_attention dot, input_feed 0
#   transformer         2 + 2 layers, d_model 24, 4 heads, transformer_ff 48, sinusoidal
#                       positions, no q/k/v or feed-forward biases (OpenNMT-py's default),
#                       160 words a side (KINDS=transformer; see below for how it is
#                       stored: weights in float16, logs in xz, 100 attention matrices)
# Sizes are tiny (word vectors 16, hidden 32, vocabularies of 400 words a side, 600
# updates of 64 sentences): the repository stays under its 45 MB (tests/core/test_demo.py),
# each checkpoint about 200 KB; the checkpoints
# are released with onmt_release_model (the optimiser's state dropped), as users ship them.
# OpenNMT-py runs from its own venv (../shared/bench/peers-onmt.sh installs it); it is not
# a dependency of the workbench. CPU, 2 threads, fixed seeds.
# Usage: experiments/onmt_fixtures.sh [OUT_DIR] [N] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-tests/fixtures/onmt}; N=${2:-200}; STEPS=${3:-600}
PEERS=${PEERS:-$HOME/.cache/nmt-peers}
D=${DATA:-$PEERS/tatoeba-es-en}; BIN=${ONMT_BIN:-$PEERS/venv-onmt/bin}
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 OMP_NUM_THREADS=2
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
# the first N test pairs of at most 25 tokens a side
paste "$D/test.tok.es" "$D/test.tok.en" \
  | awk -F'\t' -v n="$N" '{ns=split($1,a," "); nt=split($2,b," ");
      if (ns>0 && ns<=25 && nt>0 && nt<=25 && k<n) {print; k++}}' > "$W/pairs"
cut -f1 "$W/pairs" > "$OUT/test.es"; cut -f2 "$W/pairs" > "$OUT/test.en"

kind_options() {  # kind -> OpenNMT-py options, one "key: value" a line
  case $1 in
    lstm-general-feed) printf 'encoder_type: rnn\nbrnn: false\nenc_layers: 2\ndec_layers: 2\nglobal_attention: general\ninput_feed: 1\n' ;;
    lstm-brnn-mlp) printf 'encoder_type: brnn\nbrnn: true\nenc_layers: 2\ndec_layers: 2\nglobal_attention: mlp\ninput_feed: 1\n' ;;
    lstm-dot-std) printf 'encoder_type: rnn\nbrnn: false\nenc_layers: 1\ndec_layers: 1\nglobal_attention: dot\ninput_feed: 0\n' ;;
    transformer) printf 'encoder_type: transformer\ndecoder_type: transformer\nenc_layers: 2\ndec_layers: 2\nheads: 4\ntransformer_ff: 48\nposition_encoding: true\nadd_qkvbias: false\nadd_ffnbias: false\nself_attn_type: scaled-dot\nparam_init: 0\nparam_init_glorot: true\nword_vec_size: 24\nhidden_size: 24\nlearning_rate: 0.002\n' ;;
  esac
}
rnn_options() {  # what the RNN kinds share
  printf 'decoder_type: rnn\nrnn_type: LSTM\nword_vec_size: 16\nhidden_size: 32\nbridge: false\nparam_init: 0.1\nlearning_rate: 0.003\n'
}

for kind in ${KINDS:-lstm-general-feed lstm-brnn-mlp lstm-dot-std}; do
  R="$W/$kind"; mkdir -p "$R"
  VOCAB=400; [ "$kind" = transformer ] && VOCAB=160
  cat > "$R/train.yaml" <<EOF
save_data: "$R"
overwrite: true
src_vocab: "$D/vocab.es.counts"
tgt_vocab: "$D/vocab.en.counts"
src_vocab_size: $VOCAB
tgt_vocab_size: $VOCAB
data:
    corpus_1:
        path_src: "$D/train.tok.es"
        path_tgt: "$D/train.tok.en"
        transforms: [filtertoolong]
    valid:
        path_src: "$D/dev.tok.es"
        path_tgt: "$D/dev.tok.en"
        transforms: [filtertoolong]
src_seq_length: 50
tgt_seq_length: 50
model_task: seq2seq
$(case $kind in lstm-*) rnn_options ;; esac)
$(kind_options "$kind")
dropout: [0.1]
seed: 42
train_steps: $STEPS
valid_steps: 1000000
save_checkpoint_steps: $STEPS
keep_checkpoint: 1
report_every: 100
batch_type: sents
batch_size: 64
normalization: tokens
optim: adam
decay_method: none
max_grad_norm: 5
num_workers: 0
bucket_size: 16384
save_model: "$R/model"
EOF
  echo "# $kind: training $STEPS updates"
  "$BIN/onmt_train" -config "$R/train.yaml" > "$R/train.log" 2>&1 \
    || { tail -n 20 "$R/train.log"; exit 1; }
  grep -o 'Step [0-9]*/.*acc: *[0-9.]*; ppl: *[0-9.]*' "$R/train.log" | tail -n 1
  mkdir -p "$OUT/$kind"
  "$BIN/onmt_release_model" -m "$R/model_step_$STEPS.pt" -o "$OUT/$kind/model.pt"
  MODEL="$OUT/$kind/model.pt"
  if [ "$kind" = transformer ]; then  # to stay small: its weights rounded to float16
    # (OpenNMT-py and the workbench compute in float32 from the rounded weights; OpenNMT-py
    # translates with this file), and the committed copy without its two sin/cos position
    # tables (float32, 5000 rows each, 960 KB: the workbench computes the same table,
    # onmt_tf checks a stored one against it; OpenNMT-py cannot load a file without them)
    MODEL="$R/model.pt"
    "$BIN/python" -c 'import sys, torch
c = torch.load(sys.argv[1], weights_only=False)
half = lambda v: v.half() if v.is_floating_point() else v
for part in ("model", "generator"):
    c[part] = {k: v if k.endswith(".pe") else half(v) for k, v in c[part].items()}
torch.save(c, sys.argv[2])
c["model"] = {k: v for k, v in c["model"].items() if not k.endswith(".pe")}
torch.save(c, sys.argv[1])' "$OUT/$kind/model.pt" "$MODEL"
  fi
  # one sentence a batch: OpenNMT-py's numbers then do not depend on the batch's padding;
  # -max_length_ratio 1000: no cap at 1.25 x the source's length (its default).
  # 3.5.1 fails on -with_score (a float's .item()) and, for RNN decoders, on -attn_debug
  # with a beam (its attention comes as steps x batch, not batch x steps): the beam-5
  # run logs the gold and prediction scores (-verbose, 4 decimals), a greedy run the
  # attention of its translations (-attn_debug, 7 decimals)
  T=(-model "$MODEL" -src "$OUT/test.es" -batch_size 1 -max_length 100
     -max_length_ratio 1000)
  "$BIN/onmt_translate" "${T[@]}" -tgt "$OUT/test.en" -beam_size 5 -verbose \
      -output "$OUT/$kind/beam5.txt" -log_file "$R/beam5.log" > /dev/null 2>&1 \
    || { tail -n 20 "$R/beam5.log"; exit 1; }
  "$BIN/onmt_translate" "${T[@]}" -beam_size 1 -attn_debug \
      -output "$OUT/$kind/greedy.txt" -log_file "$R/greedy.log" > /dev/null 2>&1 \
    || { tail -n 20 "$R/greedy.log"; exit 1; }
  if [ "$kind" = transformer ]; then  # smaller still: xz, the beam's translations only
    # in its log, the attention of the first 100 greedy translations (of 200)
    rm "$OUT/$kind/beam5.txt"; xz -9e "$OUT/$kind/greedy.txt"
    xz -9e < "$R/beam5.log" > "$OUT/$kind/beam5.log.xz"
    awk '/ INFO\] /{n++} n <= 102' "$R/greedy.log" | xz -9e > "$OUT/$kind/greedy.log.xz"
  else
    gzip -9n < "$R/beam5.log" > "$OUT/$kind/beam5.log.gz"
    gzip -9n < "$R/greedy.log" > "$OUT/$kind/greedy.log.gz"
  fi
  grep -o 'GOLD SCORE: .*\|PRED SCORE: .*' "$R/beam5.log" | tail -n 2 | tr '\n' ' '; echo
done
ls -l "$OUT"/*/ && du -sh "$OUT"
