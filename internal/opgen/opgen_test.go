package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate regenerates every derived file in memory and compares it with the
// committed one: a row edited in tensor/optable.go (or a kernel signature in kernels/*.cu) without
// 'go generate ./tensor' fails here.
func TestGeneratedUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(root, f.path))
		if err != nil {
			t.Errorf("%s: %v (run 'go generate ./tensor')", f.path, err)
			continue
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("%s is stale: run 'go generate ./tensor'", f.path)
		}
	}
}
