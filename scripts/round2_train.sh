#!/usr/bin/env bash
# Images round 2 (docs/images.md, "Round 2"): train one cell of the HOLD/CLD/VP comparison on Fashion-MNIST
# with the CPU recipe, in segments that survive across sessions, and export the EMA weights at every
# scored checkpoint (4,000, 4,500, …, 6,000 steps).
#
#   scripts/round2_train.sh NAME SDE-FLAGS RECIPE-FLAGS
#   scripts/round2_train.sh hold3-edm  "--sde hold --order 3" "--times sigma:edm"
#   scripts/round2_train.sh vp-edm-pc  "--sde vp"             "--times sigma:edm --precond edm"
#
# The run lives in runs/round2/NAME (resumed when it exists), the exports in runs/round2/NAME-stepN.
# HOLDCTL (default bin/holdctl), DATA (default /usr/share/datasets/fashion-mnist), SEED (default 0),
# TIME_LIMIT (passed to train as --time-limit; default none) and THREADS (default 1) may be set.
set -euo pipefail
name=$1 sde=$2 recipe=$3
holdctl=${HOLDCTL:-bin/holdctl}
data=${DATA:-/usr/share/datasets/fashion-mnist}
seed=${SEED:-0}
threads=${THREADS:-1}
run=runs/round2/$name
mkdir -p runs/round2
limit=()
[ -n "${TIME_LIMIT:-}" ] && limit=(--time-limit "$TIME_LIMIT")
for stop in 4000 4500 5000 5500 6000; do
  out=$run-step$stop
  [ -e "$out/config.yaml" ] && continue
  if [ -e "$run/ckpt.safetensors" ]; then
    # shellcheck disable=SC2086
    "$holdctl" train --resume --out "$run" --steps "$stop" --threads "$threads" "${limit[@]}" --log-every 25
  else
    # shellcheck disable=SC2086
    "$holdctl" train --data "fashion-mnist:$data" $sde --model ncsnpp-small --dropout 0 --flip $recipe \
      --steps "$stop" --batch 32 --lr 1e-3 --warmup 200 --ema 0.999 --grad-clip 1 --seed "$seed" \
      --ckpt-every 250 --log-every 25 --threads "$threads" "${limit[@]}" --out "$run"
  fi
  step=$(tail -n 1 "$run/log.csv" | cut -d, -f1)
  if [ "$step" != "$stop" ]; then
    echo "round2_train: $name stopped at step $step before $stop (time limit or interrupt); rerun to continue" >&2
    exit 0
  fi
  "$holdctl" export --ckpt "$run" --out "$out"
done
echo "round2_train: $name done"
