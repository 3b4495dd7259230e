#!/usr/bin/env bash
# Images round 2 (docs/images.md, "Round 2"): FID and KID (the shipped classifier's features, against the
# 10,000 Fashion-MNIST test images) of exported checkpoints, n = 1,000 at a-sde2 NFE 50 on the vpmatched
# grid with --clip 1 --denoise, seed 1. Appends "export<TAB>command<TAB>json" to OUT for each export not
# already in it; scripts/round2_table.py OUT renders the table (mean ± sd over each run's checkpoints).
#   scripts/round2_kid.sh OUT EXPORT…        e.g. scripts/round2_kid.sh docs/images/round2/kid.tsv runs/round2/*-step*
set -euo pipefail
out=${1:?usage: scripts/round2_kid.sh OUT EXPORT…}
shift
holdctl=${HOLDCTL:-bin/holdctl}
data=${FMNIST:-/usr/share/datasets/fashion-mnist}
threads=${THREADS:-1}
touch "$out"
for exp in "$@"; do
  [ -e "$exp/config.yaml" ] || continue
  name=$(basename "$exp")
  cut -f1 "$out" | grep -qx "$name" && continue
  args=(fid --features models/fmnist-classifier.safetensors --ref "fashion-mnist:$data#test" --n 1000 --seed 1
    --json --threads "$threads" --samples "$exp" --sampler a-sde2 --nfe 50 --grid vpmatched --clip 1 --denoise)
  json=$("$holdctl" "${args[@]}" 2>/dev/null) || { echo "failed: holdctl ${args[*]}" >&2; continue; }
  printf '%s\tholdctl %s\t%s\n' "$name" "${args[*]}" "$json" >> "$out"
  echo "$name: $json" >&2
done
