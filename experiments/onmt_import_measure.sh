#!/usr/bin/env bash
# Issue 49 item 3: a real OpenNMT-py model trained here, imported, inspected like the
# workbench's own runs. OpenNMT-py 3.5.1 trains the bench model (../shared/bench's
# onmt.yaml.tmpl: 2 x 256 LSTM, general attention, input feeding; Tatoeba es-en bench
# split by prepare_tatoeba.py) for STEPS updates; the checkpoint is imported into a
# copy of the demo workspace (`runs import`), its attention aligns the demo gold at every
# reading beside eflomal, an alignment head is trained over it on the bench split
# (`train --alignment-head RUN --corpus`, eflomal's links of that split as its guide),
# and the head aligns the same gold. The demo's own tatoeba-luong (same architecture,
# sentencepiece instead of words) is aligned beside it.
# Usage: experiments/onmt_import_measure.sh ONMT_CHECKPOINT [HEAD_STEPS]
# Env: WS (default /tmp/onmt-import-ws), PEERS (default ~/.cache/nmt-peers), THREADS.
set -euo pipefail
cd "$(dirname "$0")/.."
CKPT=$1; HEAD_STEPS=${2:-1500}
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/onmt-import-ws}; PEERS=${PEERS:-$HOME/.cache/nmt-peers}
D=$PEERS/tatoeba-es-en; THREADS=${THREADS:-2}
echo "# $($PY -c 'from core.train.device import machine_summary; print(machine_summary())')"
echo "# $(date -Is) load $(cat /proc/loadavg); checkpoint $CKPT"
rm -rf "$WS"
$PY -c "import sys; from pathlib import Path; from core.services.demo import ensure_demo_workspace; ensure_demo_workspace(Path(sys.argv[1]))" "$WS"
$PY main.py --workspace "$WS" corpus import "$D/train.tok.es" "$D/train.tok.en" \
    --format parallel --src-lang es --tgt-lang en --name bench-split
$PY main.py --workspace "$WS" corpus split bench-split --seed 1234 --ratios 0.98,0.01,0.01
$PY main.py --workspace "$WS" runs import "$CKPT" --name onmt-bench \
    --src-lang es --tgt-lang en
echo "## the imported run's attention on demo-gold, every reading, beside eflomal"
$PY main.py --workspace "$WS" align --run onmt-bench --gold-set demo-gold --reading all \
    --baseline eflomal --baseline-corpus bench-split
echo "## the demo's own tatoeba-luong on the same gold"
$PY main.py --workspace "$WS" align --run tatoeba-luong --gold-set demo-gold --reading all \
    --baseline none
start=$(date +%s)
$PY main.py --workspace "$WS" train --alignment-head onmt-bench --corpus bench-split \
    --max-steps "$HEAD_STEPS" --threads "$THREADS" --quiet
echo "## head trained: $(( $(date +%s) - start )) s wall, load $(cat /proc/loadavg)"
echo "## the alignment head over the imported run on demo-gold"
$PY main.py --workspace "$WS" align --run onmt-bench-head --gold-set demo-gold \
    --reading head --baseline none
echo "# $(date -Is) load $(cat /proc/loadavg)"
