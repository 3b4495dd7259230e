# holdgo — see README.md. Every target works on a fresh clone with Go installed.
GO      ?= go
BIN     ?= bin/holdctl
PKGS    ?= ./...
BENCH   ?= .
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: all build build-mpi test test-mpi test-browser test-noasm test-race lint bench golden clean ptx cuda-ci gpu-check gpu-bundle gpu-bundle-check fuzz

all: build test

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/holdctl

# The test command of the README and of CI: vet, the suite, and the suite
# again with every assembly path compiled out.
test: lint
	$(GO) test -count=1 -timeout 30m $(PKGS)
	$(GO) test -count=1 -timeout 30m -tags noasm $(PKGS)

# Data-parallel training on MPI (docs/distributed.md; needs Debian's openmpi-bin, libopenmpi-dev
# and pkg-config): holdctl with the MPI communicator, for mpirun -np N bin/holdctl-mpi train ….
build-mpi:
	$(GO) build -tags mpi -ldflags "-X main.version=$(VERSION)" -o bin/holdctl-mpi ./cmd/holdctl

# The MPI checks: the dist binding under mpirun -np 2/3 (collectives, a peer's Abort and SIGKILL),
# the sharded training step, and holdctl train on 2 and 3 ranks against one process (toy MLP,
# ncsnpp-tiny, a resume on another number of ranks, a non-finite loss, a killed rank); then the
# device path (host staging of the gradients) on the CUDA host shim. A few minutes on 2 cores.
test-mpi:
	$(GO) vet -tags mpi ./dist ./train ./cmd/holdctl
	$(GO) test -count=1 -tags mpi ./dist ./train
	$(GO) test -count=1 -timeout 30m -tags mpi -run MPI -v ./cmd/holdctl
	$(GO) test -count=1 -timeout 30m -tags "cudashim mpi" -run 'DataParallel|MPIShim' -v ./train ./cmd/holdctl

# holdctl serve's page end to end in a real headless browser (Debian's chromium-headless-shell, driven
# with chromedp; HOLDGO_BROWSER names another): load, pick a test image, draw a mask, restore, see the
# numbers, a bad upload refused, sample. Fails where no browser is found; without -tags browser the
# test only says it was skipped (and make lint does not vet it: chromedp is built only here).
test-browser:
	$(GO) vet -tags browser ./serve
	$(GO) test -count=1 -tags browser -run 'ServeBrowser' -v ./serve

test-race:
	$(GO) test -race -short $(PKGS)

# lint: gofmt, vet (with and without assembly) and nancheck, the rule that every tolerance check in a
# test fails on NaN (if !(err <= tol), not if err > tol; internal/nancheck).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags noasm $(PKGS)
	$(GO) run ./internal/nancheck $$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go')

# Fuzz every reader of outside bytes (func FuzzX in a _test.go file), FUZZTIME each, one
# target per go test invocation (go test -fuzz takes one), one worker each. Not part of test:
# the seeds (f.Add and testdata/fuzz/FuzzX) already run there. A crasher is saved under the
# package's testdata/fuzz/FuzzX and fails the run (scripts/fuzz.sh; Go's end-of-window deadline race,
# golang/go#75804, is reported as a flake once the corpus replays cleanly).
# -fuzzminimizetime: Go minimises every new interesting input for up to 60 s by default, and the
# executions of that phase do not count: FuzzLoad (.pth) ran 33 inputs in 30 s that way, 6,400 with 2 s.
FUZZTIME  ?= 60s
FUZZFLAGS ?= -parallel 1 -fuzzminimizetime 2s
fuzz:
	@GO='$(GO)' FUZZTIME='$(FUZZTIME)' FUZZFLAGS='$(FUZZFLAGS)' bash scripts/fuzz.sh

# Benchmarks: make bench BENCH=Sgemm PKGS=./internal/gemm
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

# Regenerate the PyTorch golden files (needs Debian's python3-torch).
golden:
	/usr/bin/python3 scripts/golden_mlp.py
	/usr/bin/python3 scripts/golden_ncsnpp.py

clean:
	rm -rf bin

# Regenerate the committed PTX and host-shim wrappers after editing kernels/*.cu (needs nvcc).
ptx:
	$(MAKE) -C kernels generate

# GPU-less CUDA checks: PTX up to date, ptxas sm_80/sm_90, every kernel on the CPU through the
# host shim against the Go reference, and the -tags cuda build (installs Debian's CUDA 11.8).
cuda-ci:
	kernels/ci.sh

# On a machine with an NVIDIA GPU (driver, CUDA 11.8+ runtime and cuBLAS installed): the -tags cuda
# suite with HOLDGO_REQUIRE_GPU=1 (fails instead of skipping where no GPU is found), the supported-ops
# matrix on the GPU, 200 training steps of ncsnpp-cifar10 on the CIFAR-10 JPEG copy, the kernel
# timings and the training-step profile (kernel launches and host synchronisations per step).
# GPU_DATA and GPU_OUT override the data and the run folder (emptied first).
GPU_DATA ?= ../shared/data/cifar10-jpeg.tgz
GPU_OUT  ?= bin/gpu-check
gpu-check:
	rm -rf $(GPU_OUT)
	HOLDGO_REQUIRE_GPU=1 $(GO) test -count=1 -tags cuda -v -run 'GPU' ./cuda/
	$(GO) build -tags cuda -ldflags "-X main.version=$(VERSION)" -o bin/holdctl-cuda ./cmd/holdctl
	bin/holdctl-cuda bench ops --device cuda
	bin/holdctl-cuda train --device cuda --data images:$(GPU_DATA) --model ncsnpp-cifar10 --steps 200 --batch 128 --seed 1 --out $(GPU_OUT)
	bin/holdctl-cuda bench kernels --device cuda
	bin/holdctl-cuda bench train --device cuda

# The folder to copy to a GPU machine that has the NVIDIA driver (and PyTorch) but no Go, no sources
# and no network (docs/gpu.md, "Running on a GPU machine without Go"): holdctl-cuda, the GPU test
# binaries, the PyTorch peer, a Fashion-MNIST subset, run.sh and a MANIFEST; at most 24 MiB, and
# holdctl-cuda loads cuBLAS 11-13 at run time (no link-time libcublas). Needs the CUDA toolkit
# (kernels/install-cuda.sh) and Debian's dataset-fashion-mnist. SHIM=1 builds the same folder with
# the host shim (--device cuda runs the kernels on the CPU) into bin/gpu-bundle-shim.
GPU_BUNDLE ?= bin/gpu-bundle$(if $(SHIM),-shim)
gpu-bundle:
	GO=$(GO) gpubundle/build.sh $(GPU_BUNDLE) $(SHIM)

# The bundle's plumbing without a GPU: the shim bundle's 'run.sh --quick' end to end in at most
# 5 minutes with every step's status in report.md and report.json, and (where nvcc is installed and
# no GPU is present) the real bundle's 'run.sh' exiting 2 within 10 s with the reason in report.md.
gpu-bundle-check:
	GO=$(GO) gpubundle/check.sh
