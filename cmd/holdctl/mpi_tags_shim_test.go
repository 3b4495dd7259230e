//go:build mpi && cudashim

package main

import (
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
