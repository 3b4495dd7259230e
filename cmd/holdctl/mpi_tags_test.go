//go:build mpi && !cudashim

package main

// mpiBuildTags are the tags the MPI acceptance tests build holdctl with (the test's own).
const mpiBuildTags = "mpi"
