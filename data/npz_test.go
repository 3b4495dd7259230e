package data

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestNPZ reads numpy.savez_compressed output (scripts/fid_ref.py), round-trips
// WriteNPZ, and rejects archives that are not .npz files.
func TestNPZ(t *testing.T) {
	arrays, err := ReadNPZ("../testdata/golden/stats_b.npz")
	if err != nil {
		t.Fatal(err)
	}
	mu, sigma := arrays["mu"], arrays["sigma"]
	if mu == nil || sigma == nil || !slices.Equal(mu.Shape, []int{16}) || !slices.Equal(sigma.Shape, []int{16, 16}) || mu.Dtype != Float64 {
		t.Fatalf("stats_b.npz: %v", arrays)
	}
	path := filepath.Join(t.TempDir(), "x.npz")
	if err := WriteNPZ(path, arrays); err != nil {
		t.Fatal(err)
	}
	back, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back["sigma"].Data, sigma.Data) || !slices.Equal(back["mu"].Data, mu.Data) {
		t.Error("WriteNPZ/ReadNPZ round trip changed the values")
	}
	if err := WriteNPZ(path, map[string]*Array{"bad": {Shape: []int{3}, Data: []float64{1}}}); err == nil {
		t.Error("a shape that does not match the data was written")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("readme.txt")
	w.Write([]byte("hi"))
	zw.Close()
	if _, err := DecodeNPZ(buf.Bytes()); err == nil {
		t.Error("an archive without .npy entries decoded")
	}
	raw, _ := os.ReadFile("../testdata/golden/stats_a.npz")
	if _, err := DecodeNPZ(raw[:len(raw)/2]); err == nil {
		t.Error("a truncated .npz decoded")
	}
}

// FuzzDecodeNPZ: arbitrary bytes give arrays or an error, never a panic.
func FuzzDecodeNPZ(f *testing.F) {
	for _, p := range []string{"../testdata/golden/stats_a.npz", "../testdata/golden/stats_b.npz"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		arrays, err := DecodeNPZ(b)
		if err != nil {
			return
		}
		for k, a := range arrays {
			n := 1
			for _, s := range a.Shape {
				n *= s
			}
			if n != len(a.Data) {
				t.Fatalf("%s: shape %v for %d values", k, a.Shape, len(a.Data))
			}
		}
	})
}
