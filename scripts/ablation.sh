#!/usr/bin/env bash
# The paper's Table 3 on the 2-D multi Swiss roll: the demo recipe (holdctl demo: 50,000 steps, Lie–Trotter
# at NFE 500) for L ∈ {1, 2, 4} × α ∈ {0.02, 0.04, 0.08}; precision, recall and sliced W2, each next to its
# floor (two independent data sets). Writes OUT/L<L>-a<α>/ (the demo's files and demo.txt) and prints a
# Markdown table. Usage: scripts/ablation.sh [OUT] [extra holdctl demo flags, e.g. --steps 20000]
set -euo pipefail
out=${1:-ablation-out}
shift || true
holdctl=${HOLDCTL:-holdctl}
mkdir -p "$out"
echo "| L | α | precision (floor) | recall (floor) | sliced W2 ×10³ (floor) | train s |"
echo "|---|---|---|---|---|---|"
for L in 1 2 4; do
  for a in 0.02 0.04 0.08; do
    dir="$out/L$L-a$a"
    "$holdctl" demo -L "$L" --alpha "$a" --out "$dir" "$@" > "$dir.txt" 2>&1 || { echo "demo -L $L --alpha $a failed: see $dir.txt" >&2; exit 1; }
    mv "$dir.txt" "$dir/demo.txt"
    awk -v L="$L" -v a="$a" '
      /^  precision / { p = $2; pf = $3 }
      /^  recall / { r = $2; rf = $3 }
      /samples vs fresh data:/ { sw = $(NF-2) }
      /two independent data sets/ { swf = $(NF-4) }
      /^time: training/ { tr = $3 }
      END { sub(/s,$/, "", tr); printf "| %s | %s | %s (%s) | %s (%s) | %.2f (%.2f) | %s |\n", L, a, p, pf, r, rf, sw*1000, swf*1000, tr }
    ' "$dir/demo.txt"
  done
done
