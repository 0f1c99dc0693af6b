#!/usr/bin/env bash
# Reference runs on Tatoeba es -> en (issue 20), trained through the product CLI.
# Usage: experiments/ref_tatoeba.sh [--resume] luong|rnnsearch|guided ...
#   --resume continues each run from its last checkpoint (exact resume) with THREADS
#   threads and the epochs of its config file.
# Env: WS (workspace, default /tmp/ref-ws), DATA (shared data root), THREADS (default 2).
# Each run's log (wall time, load, machine) goes to $LOGS/<run>.log (default $WS-logs).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ref-ws}
DATA=${DATA:-/work/shared/data}
THREADS=${THREADS:-2}
LOGS=${LOGS:-$WS-logs}
mkdir -p "$LOGS"

if [ ! -f "$WS/workspace.sqlite" ] || ! $PY main.py --workspace "$WS" corpus list | grep -q tatoeba-es-en; then
  # spa.txt is English<TAB>Spanish: the tsv reader's default columns make it es -> en
  $PY main.py --workspace "$WS" corpus import "$DATA/tatoeba-spa-eng/spa.txt" --format tsv \
      --src-lang es --tgt-lang en --name tatoeba-es-en
  # the same 96/2/2 split as experiment B: 114,206 / 2,379 / 2,379 pairs
  $PY main.py --workspace "$WS" corpus split tatoeba-es-en --seed 1234 --ratios 0.96,0.02,0.02
fi

# shellcheck source=experiments/ref_common.sh
source experiments/ref_common.sh
train_refs ref-tatoeba tatoeba-es-en "$@"
