# Sourced by ref_tatoeba.sh, ref_hansards.sh and ref_head.sh: train (or --resume) reference runs.
# Needs PY, WS, LOGS, THREADS set. Usage: train_refs PREFIX CORPUS [--resume] NAME ...
# Each run's log (start/end, machine, load, the trainer's output) goes to $LOGS/<run>.log.
# MAX_MINUTES (optional): each run's wall-time budget (train --max-minutes), so it ends in
# the session that starts it. The budget is the run's total over all its resumes (it is
# stored in the run's config): to resume a run that spent it, give a larger MAX_MINUTES.
# log_start NAME LOG: the run's start line, the machine and the load, appended to LOG.
log_start() {
  {
    echo "== $1 start $(date -Is)"
    $PY -c "from core.train.device import machine_summary; print(machine_summary())"
    echo "load: $(cat /proc/loadavg)"
  } >> "$2"
}

# log_end NAME LOG START: the end line with the wall time since START (epoch seconds).
log_end() {
  echo "== $1 end $(date -Is), $(( $(date +%s) - $3 )) s wall, load $(cat /proc/loadavg)" >> "$2"
}

train_refs() {
  local prefix=$1 corpus=$2 resume=0 budget=()
  [ -n "${MAX_MINUTES:-}" ] && budget=(--max-minutes "$MAX_MINUTES")
  shift 2
  if [ "${1:-}" = "--resume" ]; then resume=1; shift; fi
  for v in "$@"; do
    local name="$prefix-$v" log start epochs
    log="$LOGS/$name.log"
    log_start "$name" "$log"
    start=$(date +%s)
    if [ "$resume" = 1 ]; then
      echo "== resume" >> "$log"
      epochs=$(sed -n 's/^epochs = \([0-9]*\).*/\1/p' "experiments/configs/$name.toml")
      steps=$(sed -n 's/^max_steps = \([0-9]*\).*/\1/p' "experiments/configs/$name.toml")
      $PY main.py --workspace "$WS" train --resume "$name" --threads "$THREADS" \
          --epochs "$epochs" --max-steps "${steps:-0}" "${budget[@]}" --quiet >> "$log" 2>&1
    else
      $PY main.py --workspace "$WS" train --config "experiments/configs/$name.toml" \
          --corpus "$corpus" --threads "$THREADS" "${budget[@]}" --quiet >> "$log" 2>&1
    fi
    log_end "$name" "$log" "$start"
  done
}
