//go:build mpi && cudashim

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// mpiBuildTags are the tags the MPI acceptance tests build holdctl with (the test's own): with
// the host shim, --device cuda trains through host staging of the gradients.
const mpiBuildTags = "mpi cudashim"

// TestMPIShimDeviceStaging: --device cuda on the host shim under mpirun -np 2, the gradients
// staged through host memory for the all-reduce, against one process on the same device.
func TestMPIShimDeviceStaging(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return toyArgs(out, 6, "--device", "cuda", "--batch", "32")
	}
	ref := filepath.Join(dir, "one")
	mustTrain(t, 0, args(ref)...)
	run := filepath.Join(dir, "np2")
	mustTrain(t, 2, args(run)...)
	compareRuns(t, "toy MLP on the shim device, 2 ranks", run, ref)
}

// TestMPIShimNCSNppDropout: ncsnpp-tiny with dropout 0.1 on --device cuda (the host shim) under
// mpirun -np 2 against one process on the same device, global batch 2, 3 steps (the shim runs a
// step of ncsnpp-tiny in seconds; the convolution after each dropout starts at zero, so the masks
// reach the loss from step 2 and the weights from step 1): rank 1's masks come from the dropout
// kernel's element offset (its samples' place in the global batch), rank 0's from offset 0.
func TestMPIShimNCSNppDropout(t *testing.T) {
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs")
	if err := os.Mkdir(imgs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMPIImages(t, imgs, 32)
	args := func(out string) []string {
		return []string{"--data", "images:" + imgs, "--model", "ncsnpp-tiny", "--device", "cuda", "--steps", "3",
			"--batch", "2", "--seed", "1", "--dropout", "0.1", "--out", out}
	}
	ref := filepath.Join(dir, "one")
	mustTrain(t, 0, args(ref)...)
	run := filepath.Join(dir, "np2")
	mustTrain(t, 2, args(run)...)
	compareRuns(t, "ncsnpp-tiny with dropout on the shim device, 2 ranks", run, ref)
}
