#!/usr/bin/env bash
# Issue 20 item 5: the bench model trained by the workbench and by OpenNMT-py 3.5.1 for the
# same wall-clock time on the same Tatoeba es->en split (../shared/bench), then test
# sacreBLEU of both (beam 5, detokenised with sacremoses, against the raw references).
# Both trainings run at the same time, one thread each: an equal CPU budget in the same
# time window, so whatever else loads the machine loads both alike.
# Usage: experiments/equal_budget.sh [MINUTES]   (default 40)
# Env: W (work folder, default /tmp/equal-budget), SHARED (default ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-40}
W=${W:-/tmp/equal-budget}
SHARED=${SHARED:-$(cd .. && pwd)/shared}
PY=${PY:-.venv/bin/python}
PEERS=${PEERS:-$HOME/.cache/nmt-peers}
mkdir -p "$W"
LOG="$W/equal-budget.log"
log() { echo "$(date -Is) $*" | tee -a "$LOG"; }

# the peer's venv and the split (peers-onmt.sh installs and prepares on first use; a short
# throughput run of 100 steps is its side effect)
[ -x "$PEERS/venv-onmt/bin/onmt_train" ] || bash "$SHARED/bench/peers-onmt.sh" "$PEERS" 100 | tee -a "$LOG"
V="$PEERS/venv-onmt"
D="$PEERS/tatoeba-es-en"
log "machine: $($PY -c 'from core.train.device import machine_summary; print(machine_summary())')"
log "budget: $MINUTES minutes each, 1 thread each, both at once; load $(cat /proc/loadavg)"

# --- OpenNMT-py: no step limit, a checkpoint every 100 steps, stopped after MINUTES ------------
R="$W/onmt"; rm -rf "$R"; mkdir -p "$R"
sed -e "s#@DATA@#$D#g" -e "s#@RUN@#$R#g" -e "s#@STEPS@#10000000#g" \
    -e "s#^save_checkpoint_steps:.*#save_checkpoint_steps: 100#" \
    "$SHARED/bench/onmt.yaml.tmpl" > "$R/train.yaml"
OMP_NUM_THREADS=1 "$V/bin/onmt_train" -config "$R/train.yaml" > "$R/stdout" 2>&1 &
ONMT_PID=$!

# --- the workbench: the same split stored in a workspace, the bench-onmt preset ----------------
WS="$W/ws"; rm -rf "$WS"
for side in es en; do cat "$D/train.raw.$side" "$D/dev.raw.$side" "$D/test.raw.$side" > "$W/all.$side"; done
$PY main.py --workspace "$WS" corpus import "$W/all.es" "$W/all.en" --src-lang es --tgt-lang en \
    --name tatoeba-bench >> "$LOG"
# the peer's split, pair for pair: train, then dev, then test, in the files' order
$PY - "$WS" "$D" <<'EOF'
import sys
from core.store import Workspace
ws, d = Workspace.open(sys.argv[1]), sys.argv[2]
n = {s: sum(1 for _ in open(f"{d}/{s}.raw.es", encoding="utf-8")) for s in ("train", "dev", "test")}
a, b = n["train"], n["train"] + n["dev"]
ws.save_split("tatoeba-bench", 0, [a / (b + n["test"]), n["dev"] / (b + n["test"]),
              n["test"] / (b + n["test"])],
              {"train": range(a), "dev": range(a, b), "test": range(b, b + n["test"])})
print("split", n)
EOF
# bf16 autocast where this CPU has native bf16 (fp32 otherwise: the trainer says which)
$PY main.py --workspace "$WS" train --preset bench-onmt --corpus tatoeba-bench --name wb \
    --epochs 1000 --max-minutes "$MINUTES" --threads 1 --set train.amp=true \
    --set data.dev_sample=0 --quiet > "$W/wb-train.log" 2>&1 &
WB_PID=$!

# the peer's clock starts with its training loop, as ours does (the loop's own timer)
until grep -q "Start training loop" "$R/stdout" 2>/dev/null || ! kill -0 $ONMT_PID 2>/dev/null; do sleep 2; done
log "onmt training started"
sleep $(( MINUTES * 60 ))
kill -TERM $ONMT_PID 2>/dev/null || true
wait $ONMT_PID 2>/dev/null || true
log "onmt stopped: $(grep -o "Step [0-9]*/" "$R/stdout" | tail -1), load $(cat /proc/loadavg)"
wait $WB_PID
log "workbench: $(tail -3 "$W/wb-train.log" | tr '\n' ' ')"

# --- test sacreBLEU, beam 5, both on 2 threads (OpenNMT-py 3.5.1 pickles its options: torch
# 2.13 loads such checkpoints only with weights_only off, for this trusted file) ----------
CKPT=$(ls -v "$R"/model_step_*.pt | tail -1)
log "onmt checkpoint: $CKPT"
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 OMP_NUM_THREADS=2 "$V/bin/onmt_translate" -model "$CKPT" -src "$D/test.tok.es" \
    -output "$W/onmt.test.tok.en" -beam_size 5 -batch_size 32 >> "$W/onmt-translate.log" 2>&1
$PY -c "
import sys
from sacremoses import MosesDetokenizer
md = MosesDetokenizer(lang='en')
with open(sys.argv[1], encoding='utf-8') as f, open(sys.argv[2], 'w', encoding='utf-8') as out:
    for line in f:
        out.write(md.detokenize(line.split()) + '\n')
" "$W/onmt.test.tok.en" "$W/onmt.test.en"
$PY main.py --workspace "$WS" translate --run wb --beam 5 --input "$D/test.raw.es" \
    --output "$W/wb.test.en" >> "$LOG" 2>&1
for sys_ in onmt wb; do
  log "$sys_ test: $($PY -m sacrebleu "$D/test.raw.en" -i "$W/$sys_.test.en" -f text)"
done
log "done, load $(cat /proc/loadavg)"
