#!/usr/bin/env bash
# The English-French runs of the demo workspace (issue 45), trained on this CPU through the
# product CLI, each step's log (machine, load, wall time) under $WS-logs / $GWS-logs:
#   train      the guided Luong runs, en -> fr and fr -> en (ref_hansards.sh demo-guided
#              demo-guided-fren: configs/ref-hansards-demo-guided{,-fren}.toml, 4,000-piece
#              vocabularies, MAX_MINUTES of training loop each, one thread each, together),
#              and the sentence-level Transformer of experiment G (exp_g_train.sh sentence);
#   heads      an alignment head over each guided run (ref_head.sh, HEAD_STEPS updates);
#   context    the two-stage target-context model over the sentence model (exp_g_train.sh
#              tgt, CTX_MINUTES);
#   eval       test BLEU and AER of every reading on the WPT-03 trial gold beside eflomal
#              (ref_hansards_eval.sh), the heads symmetrised, and the context models on the
#              held-out contrastive set and documents (exp_g_eval.sh);
#   bundle     python experiments/bundle_demo.py --pair en-fr (and the context runs).
# Usage: experiments/demo_enfr.sh STEP ...   Env: WS (/work/enfr/ws), GWS (/work/enfr/ws-g),
#   MAX_MINUTES (62), HEAD_STEPS (2000), CTX_MINUTES (45), DATA (../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export WS=${WS:-/work/enfr/ws} DATA=${DATA:-$(cd .. && pwd)/shared/data}
GWS=${GWS:-/work/enfr/ws-g}
HEAD_STEPS=${HEAD_STEPS:-2000}
for step in "$@"; do
  case "$step" in
    train)
      THREADS=1 MAX_MINUTES=${MAX_MINUTES:-62} setsid nohup bash experiments/ref_hansards.sh \
          demo-guided > "$WS-a.out" 2>&1 < /dev/null &
      sleep 20  # the first one creates the workspace
      THREADS=1 MAX_MINUTES=${MAX_MINUTES:-62} setsid nohup bash experiments/ref_hansards.sh \
          demo-guided-fren > "$WS-b.out" 2>&1 < /dev/null &
      WS=$GWS GDATA=$GWS-data LOGS=$GWS-logs MAX_MINUTES=45 nice -n 5 \
          bash experiments/exp_g_train.sh sentence ;;
    heads)
      THREADS=1 setsid nohup bash experiments/ref_head.sh ref-hansards-demo-guided \
          ref-hansards-demo-head --max-steps "$HEAD_STEPS" > "$WS-c.out" 2>&1 < /dev/null &
      THREADS=1 bash experiments/ref_head.sh ref-hansards-demo-guided-fren \
          ref-hansards-demo-head-fren --max-steps "$HEAD_STEPS"
      wait ;;
    context)
      WS=$GWS GDATA=$GWS-data LOGS=$GWS-logs MAX_MINUTES=${CTX_MINUTES:-45} \
          bash experiments/exp_g_train.sh tgt ;;
    eval)
      OUT=$WS-out SYM="ref-hansards-demo-head ref-hansards-demo-head-fren" \
          bash experiments/ref_hansards_eval.sh ref-hansards-demo-head ref-hansards-demo-head-fren
      WS=$GWS GDATA=$GWS-data OUT=$GWS-out bash experiments/exp_g_eval.sh G-sentence G-tgt ;;
    bundle)
      $PY experiments/bundle_demo.py --pair en-fr --workspace "$WS"
      $PY experiments/bundle_demo.py --pair en-fr-context --workspace "$GWS" ;;
    *) echo "unknown step $step" >&2; exit 1 ;;
  esac
done
