//go:build mpi && cudashim

package main

// mpiBuildTags are the tags the MPI acceptance tests build holdctl with (the test's own): with
// the host shim, --device cuda trains through host staging of the gradients.
const mpiBuildTags = "mpi cudashim"
