#!/bin/sh
# install-cuda.sh: install Debian's CUDA 11.8 toolkit (nvcc, ptxas, cuBLAS, the
# libcuda stub) from bookworm's non-free component. Idempotent: it does nothing
# when nvcc is already on PATH, and only adds "contrib non-free" to the Debian
# sources when they are missing. Needs root (or sudo) and network access to
# the Debian mirrors. Takes about 10 minutes on a fresh machine (~3 GB).
set -eu

if command -v nvcc >/dev/null 2>&1 && [ -e /usr/lib/x86_64-linux-gnu/libcublas.so ]; then
	echo "install-cuda: $(nvcc --version | tail -1) already installed"
	exit 0
fi

SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ]; then
	# deb822 format: extend every "Components: main" line.
	if grep -q '^Components: main$' "$src"; then
		$SUDO sed -i 's/^Components: main$/Components: main contrib non-free/' "$src"
	fi
elif [ -f /etc/apt/sources.list ]; then
	# One-line format.
	if ! grep -q 'non-free' /etc/apt/sources.list; then
		$SUDO sed -i -E 's/^(deb .* main)$/\1 contrib non-free/' /etc/apt/sources.list
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# --no-install-recommends keeps out the nvidia driver, nsight and the docs.
$SUDO apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit nvidia-cuda-dev
nvcc --version | tail -1
