package torchfile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"holdgo/internal/budget"
)

// TestMixedLayouts reads the script's small state dict: a transposed view,
// an offset view, float64 and float16 tensors; the integer tensor and the
// string are left out. Expected values are the definitions in
// scripts/golden_inception.py.
func TestMixedLayouts(t *testing.T) {
	f, err := Load("../testdata/golden/torchfile_mixed.pth")
	if err != nil {
		t.Fatal(err)
	}
	base := func(i, j int) float32 { return float32(i*4+j) / 8 }
	tr, err := f.Float32("transposed", 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 4 {
		for i := range 3 {
			if tr[j*3+i] != base(i, j) {
				t.Fatalf("transposed[%d,%d] = %v, want %v", j, i, tr[j*3+i], base(i, j))
			}
		}
	}
	off, _ := f.Float32("offset", 4)
	if !slices.Equal(off, []float32{5.0 / 8, 6.0 / 8, 7.0 / 8, 1}) {
		t.Errorf("offset view %v", off)
	}
	dbl, _ := f.Float32("double", 5)
	if !slices.Equal(dbl, []float32{-1, -0.5, 0, 0.5, 1}) {
		t.Errorf("float64 tensor %v", dbl)
	}
	half, _ := f.Float32("half", 3)
	if !slices.Equal(half, []float32{0.5, -2, 1024}) {
		t.Errorf("float16 tensor %v", half)
	}
	if !slices.Equal(f.Skipped, []string{"note", "steps"}) {
		t.Errorf("skipped %v, want [note steps]", f.Skipped)
	}
	if _, err := f.Float32("double", 4); err == nil {
		t.Error("a wrong shape was accepted")
	}
	if _, err := f.Float32("missing"); err == nil {
		t.Error("a missing tensor was found")
	}
}

// TestBothFormats checks that the zip and the legacy file of the golden
// Inception weights hold the same tensors.
func TestBothFormats(t *testing.T) {
	a, err := Load("../testdata/golden/inception_w16.pth")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("../testdata/golden/inception_w16_legacy.pth")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Names(), b.Names()) || len(a.Names()) < 90*4 {
		t.Fatalf("names differ or too few: %d and %d", len(a.Names()), len(b.Names()))
	}
	for _, n := range a.Names() {
		if !slices.Equal(a.Tensors[n].Data, b.Tensors[n].Data) || !slices.Equal(a.Tensors[n].Shape, b.Tensors[n].Shape) {
			t.Fatalf("tensor %s differs between the formats", n)
		}
	}
}

// TestCorruptFiles: truncated and altered files give errors, not panics.
func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{"../testdata/golden/torchfile_mixed.pth", "../testdata/golden/inception_w16_legacy.pth"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{0, 10, len(b) / 3, len(b) - 9} {
			p := filepath.Join(dir, "cut.pth")
			if err := os.WriteFile(p, b[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(p); err == nil {
				t.Errorf("%s cut to %d bytes loaded", src, cut)
			}
		}
	}
	if _, err := Load(filepath.Join(dir, "none.pth")); err == nil {
		t.Error("a missing file loaded")
	}
}

// FuzzLoad feeds arbitrary bytes (seeded with the golden files) to Load:
// it must return an error or tensors, never panic.
func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile("../testdata/golden/torchfile_mixed.pth"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(legacyMagic))
	// Declared-size mutations: hand-built files whose storage, view, FRAME or
	// string lengths declare far more than the file holds.
	vals := []float32{1, 2, 3, 4, 5, 6}
	for _, numel := range []uint64{6, 7, 1 << 31, 1 << 34, 1 << 62} {
		main := statePickle(numel, 0, []int32{6}, []int32{1})
		f.Add(legacyFile(main, numel, vals))
		f.Add(legacyFile(main, 6, vals))
		f.Add(zipFile(f, main, vals))
	}
	f.Add(legacyFile(statePickle(1, 0, []int32{1 << 30}, []int32{0}), 1, vals[:1]))
	f.Add(zipFile(f, statePickle(1, 0, []int32{1 << 20, 1 << 10}, []int32{0, 0}), vals[:1]))
	for _, op := range []string{"\x95", "\x8d", "\x8e", "\x96"} {
		f.Add(legacyFile(append([]byte("\x80\x04"+op), binary.LittleEndian.AppendUint64(nil, 1<<40)...), 6, vals))
	}
	if b, err := os.ReadFile("../testdata/golden/torchfile_mixed.pth"); err == nil {
		for _, off := range []int{14, 18, 22, 26, len(b) / 2} { // zip header size fields and a point inside
			m := slices.Clone(b)
			if off+4 <= len(m) {
				binary.LittleEndian.PutUint32(m[off:], 0xffffff00)
				f.Add(m)
			}
		}
	}
	defer budget.SetLimit(budget.Limit())
	budget.SetLimit(512 << 20) // the fuzzer's inputs must fail on the budget, not on the machine's memory
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "f.pth")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := Load(p)
		if err == nil {
			for _, n := range file.Names() {
				tn := file.Tensors[n]
				count := 1
				for _, d := range tn.Shape {
					count *= d
				}
				if count != len(tn.Data) {
					t.Fatalf("tensor %s: shape %v for %d values", n, tn.Shape, len(tn.Data))
				}
			}
		}
	})
}
