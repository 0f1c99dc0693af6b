#!/usr/bin/env bash
# Reference runs on the Hansards en -> fr (issue 20; the WPT-03 gold's domain), trained
# through the product CLI. Whole sittings go to train / dev / test (document-aware split).
# Usage: experiments/ref_hansards.sh [--resume] luong|local-p|rnnsearch|guided|guided-w2 ...
#   A name ending in -fren (e.g. guided-w2-fren) trains fr -> en on the corpus
#   hansards-fren: the same pairs and the same sittings in each split, reversed (for
#   symmetrised attention: align --reverse-run).
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

H="$DATA/hansards-en-fr-300k"
# import_hansards NAME SRC TGT: the corpus, split 98/1/1 of the 100 sittings, documents
# kept whole (about 1 sitting each for dev and test); the split depends on the docids and
# the seed only, so both directions get the same sittings.
import_hansards() {
  if [ ! -f "$WS/workspace.sqlite" ] || ! $PY main.py --workspace "$WS" corpus list | awk -v n="$1" '$2 == n {f = 1} END {exit !f}'; then
    $PY main.py --workspace "$WS" corpus import "$H/train.$2" "$H/train.$3" --format parallel \
        --docids "$H/train.docids" --src-lang "$2" --tgt-lang "$3" --name "$1"
    $PY main.py --workspace "$WS" corpus split "$1" --seed 1234 --ratios 0.98,0.01,0.01
  fi
}

# shellcheck source=experiments/ref_common.sh
source experiments/ref_common.sh
resume=()
if [ "${1:-}" = "--resume" ]; then resume=(--resume); shift; fi
for v in "$@"; do
  if [[ "$v" == *-fren ]]; then
    import_hansards hansards-fren fr en
    train_refs ref-hansards hansards-fren "${resume[@]}" "$v"
  else
    import_hansards hansards en fr
    train_refs ref-hansards hansards "${resume[@]}" "$v"
  fi
done
