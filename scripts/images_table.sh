#!/usr/bin/env bash
# The image comparison of docs/images.md: FID and KID (the shipped classifier's features) of each shipped
# model × sampler × NFE against the Fashion-MNIST test images, and the floor (training images against the
# test images at the same n). One `holdctl fid --json` per cell; each line of OUT is "command<TAB>json".
# scripts/images_table.py OUT renders the Markdown table.
#   scripts/images_table.sh OUT [N] [cells…]     cells: hold3 cld vp floor (default: all)
# Cells per model: the native sampler (lt; VP: em) at NFE 50 and 100, a-xdpm3 at NFE 10, 20 and 50, a-sde2 at
# NFE 50. NFES="lt50 a-xdpm310" (sampler name then NFE) restricts a model's cells to those listed.
# Needs Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist).
set -euo pipefail
out=${1:?usage: scripts/images_table.sh OUT [N] [cells…]}
n=${2:-1000}
shift 2 || shift $#
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(hold3 cld vp floor)
# Another data set, feature network, model directory or device (e.g. CIFAR-10 on a GPU):
#   REF=cifar10:DIR#test TRAIN=cifar10:DIR FEATURES=inception:pt_inception-2015-12-05-6726825d.pth \
#   MODELS=runs/cifar- DEVICE=cuda scripts/images_table.sh OUT 50000
holdctl=${HOLDCTL:-holdctl}
data=${FMNIST:-/usr/share/datasets/fashion-mnist}
ref=${REF:-"fashion-mnist:$data#test"}
train=${TRAIN:-"fashion-mnist:$data"}
feat=${FEATURES:-models/fmnist-classifier.safetensors}
models=${MODELS:-models/fmnist-}
threads=${THREADS:-0}
common=(--features "$feat" --ref "$ref" --n "$n" --seed 1 --json --threads "$threads")
[ -z "${DEVICE:-}" ] || common+=(--device "$DEVICE")

run() { # run ARGS…: one cell
  local cmd="holdctl fid ${common[*]} $*"
  local json
  json=$("$holdctl" fid "${common[@]}" "$@") || { echo "failed: $cmd" >&2; return 1; }
  printf '%s\t%s\n' "$cmd" "$json" >> "$out"
  echo "$cmd → $json" >&2
}

for cell in "${cells[@]}"; do
  case $cell in
    floor)
      run --samples "$train" ;;
    hold3|cld|vp)
      model=$models$cell
      native=lt
      [ "$cell" = vp ] && native=em
      for nfe in 50 100; do
        [ -z "${NFES:-}" ] || [[ " $NFES " == *" $native$nfe "* ]] || continue
        run --samples "$model" --sampler "$native" --nfe "$nfe" --grid quadratic --eps 1e-3 --denoise --clip 1
      done
      for nfe in 10 20 50; do
        [ -z "${NFES:-}" ] || [[ " $NFES " == *" a-xdpm3$nfe "* ]] || continue
        run --samples "$model" --sampler a-xdpm3 --nfe "$nfe" --grid vpmatched --clip 1 --denoise
      done
      # The stochastic aligned sampler (DPM-Solver++(2M) SDE in c), best on the trained demo network.
      for nfe in 50; do
        [ -z "${NFES:-}" ] || [[ " $NFES " == *" a-sde2$nfe "* ]] || continue
        run --samples "$model" --sampler a-sde2 --nfe "$nfe" --grid vpmatched --clip 1 --denoise
      done ;;
    *) echo "unknown cell $cell (want hold3, cld, vp or floor)" >&2; exit 2 ;;
  esac
done
