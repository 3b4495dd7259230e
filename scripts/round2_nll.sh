#!/usr/bin/env bash
# Images round 2 (docs/images.md, "Round 2"): bits/dim of exported checkpoints on the first 32 Fashion-MNIST
# test images (the command of docs/images.md, "Likelihood": --n 32 --batch 8 --tol 1e-5, seed 0, one thread).
# Appends "export<TAB>command<TAB>result line" to OUT for each export not already in it;
# scripts/round2_table.py reads OUT for the bits/dim column.
#   scripts/round2_nll.sh OUT EXPORT…        e.g. scripts/round2_nll.sh docs/images/round2/nll.tsv runs/round2/*-step6000
set -euo pipefail
out=${1:?usage: scripts/round2_nll.sh OUT EXPORT…}
shift
holdctl=${HOLDCTL:-bin/holdctl}
data=${FMNIST:-/usr/share/datasets/fashion-mnist}
threads=${THREADS:-1}
touch "$out"
for exp in "$@"; do
  [ -e "$exp/config.yaml" ] || continue
  name=$(basename "$exp")
  cut -f1 "$out" | grep -qx "$name" && continue
  args=(nll --ckpt "$exp" --data "fashion-mnist:$data#test" -n 32 --batch 8 --tol 1e-5 --seed 0 --threads "$threads")
  line=$("$holdctl" "${args[@]}" 2>/dev/null | tail -n 1) || { echo "failed: holdctl ${args[*]}" >&2; continue; }
  printf '%s\tholdctl %s\t%s\n' "$name" "${args[*]}" "$line" >> "$out"
  echo "$name: $line" >&2
done
