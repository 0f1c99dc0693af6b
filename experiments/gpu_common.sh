# Sourced by the GPU scripts (gpu_figures.sh, gpu_host_waits.sh) after they set OUT and
# BUDGET: the budget helpers, the carried wheels installed, OUT/machine.txt written.
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
stamp() { echo "## $(date -u +%H:%M:%S) $*  ($(left) s left)"; }
# limited CAP COMMAND...: COMMAND under min(CAP, the budget left); skipped under 20 s
# left (exit status 125, so that a skipped step is not reported as passed)
limited() {
  local cap=$1 l; shift; l=$(left)
  if (( l < 20 )); then echo "skipped: $l s of the budget left"; return 125; fi
  timeout $(( cap < l ? cap : l )) "$@"
}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/nmt-gpu-site \
    .whl-gpu/*.whl || exit 1
export PYTHONPATH=/tmp/nmt-gpu-site PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nproc; uptime; } > "$OUT/machine.txt" 2>&1
