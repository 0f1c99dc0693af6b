#!/usr/bin/env bash
# Experiment G (Issue 18 item 3): sentence-level Transformer, concat, multi-encoder WS,
# two-stage TS with source context and TS with TARGET context (the previous reference
# sentence in training, the model's own translation when translating), trained on this
# CPU on Hansards sittings + subtitle mini-documents (experiments/prep_context_docs.py).
#
# Usage: experiments/exp_g_train.sh VARIANT ...   VARIANT: sentence | ws | concat | ts | tgt
#   ts and tgt are stage 2 (only the context encoder and the gate train), initialised
#   from G-sentence, so run `sentence` first. Each variant runs in the background
#   (1 thread each, bf16 autocast where the CPU has it) and logs to $LOGS/G-<variant>.log.
# Env: WS (/tmp/ws-g), GDATA (/tmp/g-data), LOGS (/tmp/g-logs), MAX_MINUTES (45),
#      DATA (../shared/data), AMP (true), STEPS (0 = no step limit: the budget is MAX_MINUTES).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
WS=${WS:-/tmp/ws-g}; GDATA=${GDATA:-/tmp/g-data}; LOGS=${LOGS:-/tmp/g-logs}
DATA=${DATA:-$(cd .. && pwd)/shared/data}
MAX_MINUTES=${MAX_MINUTES:-45}; AMP=${AMP:-true}
mkdir -p "$LOGS"
if ! $PY main.py --workspace "$WS" corpus list 2>/dev/null | grep -q docs-hansards-subs; then
  $PY experiments/prep_context_docs.py "$WS" "$GDATA" --data "$DATA"
fi
COMMON=(--corpus docs-hansards-subs --set data.pretokenized=true --set train.amp="$AMP"
        --max-minutes "$MAX_MINUTES" --max-steps "${STEPS:-0}" --epochs 100 --valid-every 500 --threads 1 --quiet)
for v in "$@"; do
  case "$v" in
    sentence) args=(--preset transformer-cpu) ;;
    ws)       args=(--preset context-ws-cpu) ;;
    concat)   args=(--preset concat-cpu) ;;
    ts)       args=(--preset context-ts-cpu --init-from G-sentence) ;;
    tgt)      args=(--preset context-tgt-cpu --set model.strategy=ts --set train.stage=2
                    --init-from G-sentence) ;;
    *) echo "unknown variant $v" >&2; exit 1 ;;
  esac
  log="$LOGS/G-$v.log"
  {
    echo "== G-$v start $(date -Is)"
    $PY -c "from core.train.device import machine_summary; print(machine_summary())"
    echo "load: $(cat /proc/loadavg)"
  } >> "$log"
  setsid nohup bash -c "start=\$(date +%s); $PY main.py --workspace '$WS' train --name G-$v ${args[*]} ${COMMON[*]}; \
    echo \"== G-$v end \$(date -Is), \$(( \$(date +%s) - start )) s wall, rc \$?, load \$(cat /proc/loadavg)\"" \
    >> "$log" 2>&1 < /dev/null &
  echo "G-$v started (log $log)"
done
