#!/usr/bin/env bash
# Reference runs on the Hansards en -> fr (issue 20; the WPT-03 gold's domain), trained
# through the product CLI. Whole sittings go to train / dev / test (document-aware split).
# Usage: experiments/ref_hansards.sh [--resume] luong|local-p|rnnsearch|guided ...
#   --resume continues each run from its last checkpoint (exact resume) with THREADS
#   threads and the epochs of its config file.
# Env: WS (workspace, default /tmp/ref-ws), DATA (shared data root), THREADS (default 2).
# Each run's log (wall time, load, machine) goes to $LOGS/<run>.log (default $WS-logs).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ref-ws-hansards}
DATA=${DATA:-/work/shared/data}
THREADS=${THREADS:-2}
LOGS=${LOGS:-$WS-logs}
mkdir -p "$LOGS"

if [ ! -f "$WS/workspace.sqlite" ] || ! $PY main.py --workspace "$WS" corpus list | grep -q hansards; then
  H="$DATA/hansards-en-fr-300k"
  $PY main.py --workspace "$WS" corpus import "$H/train.en" "$H/train.fr" --format parallel \
      --docids "$H/train.docids" --src-lang en --tgt-lang fr --name hansards
  # 98/1/1 of the 100 sittings, documents kept whole: about 1 sitting each for dev and test
  $PY main.py --workspace "$WS" corpus split hansards --seed 1234 --ratios 0.98,0.01,0.01
fi

# shellcheck source=experiments/ref_common.sh
source experiments/ref_common.sh
train_refs ref-hansards hansards "$@"
