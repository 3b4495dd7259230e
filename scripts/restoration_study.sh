#!/usr/bin/env bash
# The restoration study of docs/restoration.md (issue 46): the shipped Fashion-MNIST models, 200 test
# images, the same images, masks, measurements and seeds for every model (holdctl experiment restore).
#   scripts/restoration_study.sh            # all five tables (about two hours on one core)
#   scripts/restoration_study.sh cpu        # one of: cpu, methods, dps, h100, calib
# HOLDCTL (default bin/holdctl), DATA (default /usr/share/datasets/fashion-mnist) and THREADS (default 1)
# may be set. Each table goes to docs/restoration/study-NAME.md, its numbers to study-NAME.json.
set -euo pipefail
holdctl=${HOLDCTL:-bin/holdctl}
data=${DATA:-/usr/share/datasets/fashion-mnist}
threads=${THREADS:-1}
common=(--in "fashion-mnist:$data#test" --n 200 --seed 1 --features models/fmnist-classifier.safetensors
  --prior "fashion-mnist:$data" --threads "$threads" --force)
cpu=(--model hold3=models/fmnist-hold3 --model cld=models/fmnist-cld --model vp=models/fmnist-vp --pair hold3:cld --pair hold3:vp)
h100=(--model hold3=models/fmnist-h100-hold3 --model cld=models/fmnist-h100-cld --model vp=models/fmnist-h100-vp --pair hold3:cld --pair hold3:vp)
run() {
  local name=$1
  shift
  "$holdctl" experiment restore "${common[@]}" "$@" --out "docs/restoration/study-$name.md" --json-out "docs/restoration/study-$name.json"
}
for table in "${@:-cpu methods dps h100 calib}"; do
  for t in $table; do
    case $t in
    cpu) run cpu "${cpu[@]}" --tasks inpaint-box,sr4,denoise:0.2 --methods ddnm,none --nfe 20,50,100 ;;
    # DPS at its own ζ = 0.3 (tuned for 1,000 steps); the "dps" table has holdctl's default ζ = 3.
    methods) run methods "${cpu[@]}" --tasks inpaint-box --methods replace,repaint,ddnm,pigdm,dps --dps-scale 0.3 --nfe 50 ;;
    dps) run dps "${cpu[@]}" --tasks inpaint-box --methods dps --nfe 50 ;;
    h100) run h100 "${h100[@]}" --tasks inpaint-box,sr4,denoise:0.2 --methods ddnm,none --nfe 50 ;;
    # Calibration: 50 images × 8 samples; a calibrated sampler's mean of 8 gains 10·log10(16/9) = 2.50 dB.
    calib) run calib "${cpu[@]}" --tasks inpaint-box,denoise:0.2 --methods ddnm,none --nfe 50 --n 50 --samples-per-image 8 ;;
    *) echo "restoration_study: unknown table $t (cpu, methods, dps, h100 or calib)" >&2; exit 2 ;;
    esac
  done
done
