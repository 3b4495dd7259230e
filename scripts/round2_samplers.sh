#!/usr/bin/env bash
# Images round 2 (docs/images.md, "Round 2"): is a-sde2 at NFE 50 still each model's best sampler? FID and
# KID (n = 1,000, seed 1, the shipped classifier's features) of exported models at the cells the earlier
# sets compared beside a-sde2 NFE 50 (in kid.tsv): a-sde2 NFE 100 and a-xdpm3 NFE 20 (vpmatched grid), the native
# sampler at NFE 100 (lt for HOLD and CLD, em for VP; quadratic grid, eps 1e-3); --clip 1 --denoise on all.
# Appends "export<TAB>command<TAB>json" to OUT for each (export, cell) not already in it.
#   scripts/round2_samplers.sh OUT EXPORT…      e.g. scripts/round2_samplers.sh docs/images/round2/samplers.tsv models/fmnist-r2-*
set -euo pipefail
out=${1:?usage: scripts/round2_samplers.sh OUT EXPORT…}
shift
holdctl=${HOLDCTL:-bin/holdctl}
data=${FMNIST:-/usr/share/datasets/fashion-mnist}
threads=${THREADS:-1}
touch "$out"
for exp in "$@"; do
  [ -e "$exp/config.yaml" ] || continue
  native=lt
  grep -q '^sde: vp' "$exp/config.yaml" && native=em
  for cell in "a-xdpm3 20 vpmatched" "$native 100 quadratic --eps 1e-3" "a-sde2 100 vpmatched"; do
    read -r sampler nfe grid extra <<<"$cell"
    key="$(basename "$exp") $sampler $nfe"
    cut -f1 "$out" | grep -qxF "$key" && continue
    # shellcheck disable=SC2206
    args=(fid --features models/fmnist-classifier.safetensors --ref "fashion-mnist:$data#test" --n 1000 --seed 1
      --json --threads "$threads" --samples "$exp" --sampler "$sampler" --nfe "$nfe" --grid "$grid" $extra --clip 1 --denoise)
    json=$("$holdctl" "${args[@]}" 2>/dev/null) || { echo "failed: holdctl ${args[*]}" >&2; continue; }
    printf '%s\tholdctl %s\t%s\n' "$key" "${args[*]}" "$json" >> "$out"
    echo "$key: $json" >&2
  done
done
