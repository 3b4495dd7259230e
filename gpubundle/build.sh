#!/usr/bin/env bash
# gpubundle/build.sh OUT [SHIM]: the folder 'make gpu-bundle' copies to a GPU machine that has the
# NVIDIA driver (and, for the speed step, PyTorch) but no Go, no sources and no network.
#   OUT/run.sh               the one command (gpubundle/run.sh; docs/gpu.md)
#   OUT/bin/holdctl-cuda.gz  holdctl -tags cuda, stripped; cuBLAS 11-13 loaded at run time
#   OUT/bin/cuda.test.gz     the kernel suite and the backend table (go test -c -tags cuda ./cuda)
#   OUT/bin/train.test.gz    training cuda vs cpu (go test -c -tags cuda ./train)
# The binaries are gzipped (34 → 14 MB; run.sh unpacks them into its OUTDIR): a lease's machine
# receives the repository and the bundle together under one size limit (64 MiB).
#   OUT/peer/                the PyTorch NCSN++ (scripts/golden_ncsnpp.py) and its training-step timer
#   OUT/data/fashion-mnist   the first $FMNIST_N Fashion-MNIST training images (IDX, gzip)
#   OUT/data/tiny8           64 of them, box-filtered to 8×8 PNGs (the --quick image step)
#   OUT/MANIFEST             versions, build flags and the SHA-256 of every file
# SHIM=1 builds the same folder with -tags cudashim: --device cuda is then the host shim (the CUDA
# kernels compiled for the CPU), so 'run.sh --quick OUT' runs every step on a machine without a GPU.
# Fails when the folder is over $MAX_MIB MiB or holdctl-cuda still needs libcublas at link time.
set -euo pipefail
out=${1:?usage: gpubundle/build.sh OUT [SHIM]}
shim=${2:-}
cd "$(dirname "$0")/.."
GO=${GO:-go}
MAX_MIB=${MAX_MIB:-24}
FMNIST=${FMNIST:-/usr/share/datasets/fashion-mnist}
FMNIST_N=${FMNIST_N:-10000}
PY=${PY:-python3}
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)

tags=cuda
[ -n "$shim" ] && tags=cudashim
[ -f "$FMNIST/train-images-idx3-ubyte.gz" ] || { echo "gpu-bundle: $FMNIST/train-images-idx3-ubyte.gz missing (apt-get install dataset-fashion-mnist)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/peer" "$out/data/fashion-mnist" "$out/data/tiny8"
flags=(-tags "$tags" -trimpath -ldflags "-s -w -X main.version=$version")
echo "gpu-bundle: go build ${flags[*]} → $out/bin/holdctl-cuda"
$GO build "${flags[@]}" -o "$out/bin/holdctl-cuda" ./cmd/holdctl
for pkg in cuda train; do
	echo "gpu-bundle: go test -c ${flags[*]} ./$pkg → $out/bin/$pkg.test"
	$GO test -c "${flags[@]}" -o "$out/bin/$pkg.test" "./$pkg"
done
if [ -z "$shim" ]; then
	if readelf -d "$out/bin/holdctl-cuda" | grep -i 'NEEDED.*cublas'; then
		echo "gpu-bundle: holdctl-cuda still needs libcublas at link time" >&2
		exit 1
	fi
fi

gzip -9n "$out/bin/holdctl-cuda" "$out/bin/cuda.test" "$out/bin/train.test"
cp gpubundle/run.sh "$out/run.sh"
cp scripts/golden_ncsnpp.py gpubundle/peer_train.py gpubundle/peer_conv.py "$out/peer/"
chmod +x "$out/run.sh"

# Data: the first FMNIST_N training images (no labels: training does not use them), and 64 of them
# averaged down to 8×8 grayscale PNGs for the shim-sized image step.
"$PY" - "$FMNIST/train-images-idx3-ubyte.gz" "$out/data" "$FMNIST_N" <<'PYEOF'
import gzip, os, struct, sys, zlib
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with gzip.open(src, "rb") as f:
    magic, total, rows, cols = struct.unpack(">IIII", f.read(16))
    n = min(n, total)
    pix = f.read(n * rows * cols)
with gzip.GzipFile(os.path.join(out, "fashion-mnist", "train-images-idx3-ubyte.gz"), "wb", mtime=0) as g:
    g.write(struct.pack(">IIII", magic, n, rows, cols) + pix)
def png(path, w, h, data):
    raw = b"".join(b"\x00" + data[y * w:(y + 1) * w] for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
for i in range(64):  # 28×28 → crop 24×24 → 3×3 box mean → 8×8
    img = pix[i * rows * cols:(i + 1) * rows * cols]
    small = bytes(sum(img[(2 + 3 * y + dy) * cols + 2 + 3 * x + dx] for dy in range(3) for dx in range(3)) // 9
                  for y in range(8) for x in range(8))
    png(os.path.join(out, "tiny8", "%02d.png" % i), 8, 8, small)
PYEOF

{
	echo "holdgo GPU bundle"
	echo "version: $version"
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -sm), $($GO version | cut -d' ' -f3)"
	echo "build tags: $tags (flags: ${flags[*]})"
	if [ -z "$shim" ]; then
		echo "CUDA headers: $(nvcc --version 2>/dev/null | tail -1 || echo unknown)"
		echo "needs: $(gzip -dc "$out/bin/holdctl-cuda.gz" >"$out/.elf" && readelf -d "$out/.elf" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')+ cuBLAS 11-13 at run time (\$HOLDGO_CUBLAS, libcublas.so.13/.12/.11)"
		echo "glibc symbols up to: $(objdump -T "$out/.elf" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)"
		rm -f "$out/.elf"
	else
		echo "host shim: --device cuda runs the CUDA kernels on the CPU (no GPU, no driver needed)"
	fi
	echo "data: fashion-mnist first $FMNIST_N training images ($FMNIST), tiny8 = 64 of them at 8×8"
	echo
	echo "sha256:"
	(cd "$out" && find . -type f ! -name MANIFEST | LC_ALL=C sort | xargs sha256sum)
} > "$out/MANIFEST"

size=$(du -sb "$out" | cut -f1)
mib=$(( (size + (1 << 20) - 1) >> 20 ))
echo "gpu-bundle: $out is $mib MiB (limit $MAX_MIB MiB)"
if [ "$size" -gt $(( MAX_MIB << 20 )) ]; then
	echo "gpu-bundle: $out is over $MAX_MIB MiB" >&2
	exit 1
fi
