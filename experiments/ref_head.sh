#!/usr/bin/env bash
# An alignment head (model.alignment_head, core/models/alignment_head.py) over a trained
# reference run, which stays as it is (issue 20), through the product CLI
# (`train --alignment-head`), with the machine, load and wall time logged.
# Usage: experiments/ref_head.sh RUN NAME [--guide-runs RUN[,REVERSE]] [--max-steps N]
#   without --guide-runs the head is guided by eflomal's links of RUN's training split;
#   with it, by those runs' own attention (no aligner outside the models).
# Env: WS (workspace, default /tmp/ref-ws-hansards), THREADS (default 1), LOGS.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ref-ws-hansards}
THREADS=${THREADS:-1}
LOGS=${LOGS:-$WS-logs}
mkdir -p "$LOGS"
run=$1 name=$2
shift 2
log="$LOGS/$name.log"
# shellcheck source=experiments/ref_common.sh
source experiments/ref_common.sh
log_start "$name" "$log"
start=$(date +%s)
$PY main.py --workspace "$WS" train --alignment-head "$run" --name "$name" \
    --threads "$THREADS" --quiet "$@" >> "$log" 2>&1
log_end "$name" "$log" "$start"
