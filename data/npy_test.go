package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The golden files in testdata were written by numpy 1.24 with
// testdata/gen_npy.py.

var goldenF4 = []float64{-1, -0.5, 0, 0.5, 1, 1.5}

func TestReadNumpyGolden(t *testing.T) {
	cases := []struct {
		file  string
		dtype Dtype
		shape []int
		want  []float64
	}{
		{"f4_2d.npy", Float32, []int{3, 2}, goldenF4},
		{"f4_2d_v2.npy", Float32, []int{3, 2}, goldenF4},
		{"f4_2d_v3.npy", Float32, []int{3, 2}, goldenF4},
		{"f8_1d.npy", Float64, []int{4}, []float64{1.5, -2.25, 1e-300, math.Pi}},
	}
	for _, c := range cases {
		a, err := ReadNPY(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if a.Dtype != c.dtype || !slices.Equal(a.Shape, c.shape) || !slices.Equal(a.Data, c.want) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", c.file, a.Dtype, a.Shape, a.Data, c.dtype, c.shape, c.want)
		}
	}
}

// Our writer produces the bytes numpy.save produces, header padding and
// all.
func TestWriteMatchesNumpyBytes(t *testing.T) {
	dir := t.TempDir()
	f32 := make([]float32, len(goldenF4))
	for i, v := range goldenF4 {
		f32[i] = float32(v)
	}
	p := filepath.Join(dir, "a.npy")
	if err := WriteNPY32(p, f32, 3, 2); err != nil {
		t.Fatal(err)
	}
	assertSameBytes(t, p, "testdata/f4_2d.npy")
	p = filepath.Join(dir, "b.npy")
	if err := WriteNPY64(p, []float64{1.5, -2.25, 1e-300, math.Pi}, 4); err != nil {
		t.Fatal(err)
	}
	assertSameBytes(t, p, "testdata/f8_1d.npy")
}

func assertSameBytes(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s differs from numpy's %s:\n got %q\nwant %q", got, want, g, w)
	}
}

func TestRoundTripAndLayout(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range [][]int{{0}, {1}, {5}, {1, 1}, {17, 3}, {0, 4}, {123456789, 0}, {2, 300}} {
		n := shape[0]
		if len(shape) == 2 {
			n *= shape[1]
		}
		d64 := make([]float64, n)
		d32 := make([]float32, n)
		for i := range d64 {
			d64[i] = math.Sin(float64(i)) * 1e3
			d32[i] = float32(d64[i])
		}
		for _, dtype := range []Dtype{Float32, Float64} {
			p := filepath.Join(dir, "x.npy")
			var err error
			if dtype == Float32 {
				err = WriteNPY32(p, d32, shape...)
			} else {
				err = WriteNPY64(p, d64, shape...)
			}
			if err != nil {
				t.Fatalf("%v %v: %v", shape, dtype, err)
			}
			raw, _ := os.ReadFile(p)
			hlen := int(binary.LittleEndian.Uint16(raw[8:]))
			if start := 10 + hlen; start%64 != 0 || raw[start-1] != '\n' || raw[6] != 1 || raw[7] != 0 {
				t.Errorf("%v %v: data starts at %d, header ends %q, version %d.%d", shape, dtype, start, raw[start-1], raw[6], raw[7])
			}
			a, err := ReadNPY(p)
			if err != nil {
				t.Fatalf("%v %v: %v", shape, dtype, err)
			}
			want := d64
			if dtype == Float32 {
				want = make([]float64, n)
				for i, v := range d32 {
					want[i] = float64(v)
				}
			}
			if a.Dtype != dtype || !slices.Equal(a.Shape, shape) || !slices.Equal(a.Data, want) {
				t.Errorf("%v %v: read back %v %v", shape, dtype, a.Dtype, a.Shape)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteRejectsBadShape(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	if err := WriteNPY32(p, []float32{1, 2, 3}, 2, 2); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("shape mismatch: %v", err)
	}
	if err := WriteNPY32(p, []float32{1}, 1, 1, 1); err == nil {
		t.Error("3-D shape accepted")
	}
	if err := WriteNPY32(filepath.Join(dir, "missing", "x.npy"), []float32{1}, 1); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}
}

// An existing file is replaced whole, never left half-written.
func TestWriteReplacesAtomically(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteNPY32(p, []float32{1, 2}, 2); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", st.Mode().Perm())
	}
	if a, err := ReadNPY(p); err != nil || !slices.Equal(a.Data, []float64{1, 2}) {
		t.Errorf("read back %v, %v", a, err)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile("testdata/f4_2d.npy")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withHeader := func(h string) []byte {
		b := []byte(npyMagic + "\x01\x00")
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
		return append(append(b, h...), make([]byte, 8)...)
	}
	cases := []struct {
		path string
		want string
	}{
		{"testdata/fortran.npy", "Fortran"},
		{"testdata/bigendian.npy", "big-endian"},
		{"testdata/int64.npy", "'<i8'"},
		{"testdata/f8_3d.npy", "shape [2 2 2]"},
		{write("truncated.npy", good[:len(good)-3]), "truncated data"},
		{write("trailing.npy", append(slices.Clone(good), 0)), "after the data"},
		{write("header.npy", good[:40]), "truncated header"},
		{write("short.npy", good[:9]), "truncated before"},
		{write("empty.npy", nil), "not a .npy"},
		{write("text.npy", []byte("hello, world")), "not a .npy"},
		{write("v4.npy", append([]byte(npyMagic+"\x04\x00"), good[8:]...)), "version 4.0"},
		{write("noshape.npy", withHeader("{'descr': '<f4', 'fortran_order': False}")), "'shape'"},
		{write("baddict.npy", withHeader("{'descr': '<f4' 'shape': (2,)}")), "header"},
		{write("negdim.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")), "negative dimension -2 in shape"},
		{write("negdim2.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -64), }")), "negative dimension -64 in shape"},
		{write("fracdim.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }")), `bad dimension "2.5"`},
		{write("plusdim.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (+2,), }")), `bad dimension "+2"`},
		{write("longdim.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }")), "dimension 99999999999999999999999 in shape is beyond"},
		{write("nocomma.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }")), "after dimension 2 in shape"},
		{write("emptydim.npy", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (, 2), }")), "empty dimension"},
		{write("huge.npy", withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }")), "the cap of 2³¹−1"},
	}
	for _, c := range cases {
		_, err := ReadNPY(c.path)
		if err == nil {
			t.Errorf("%s: no error", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrNPY) {
			t.Errorf("%s: error %q should name the file, say %q and wrap ErrNPY", c.path, err, c.want)
		}
	}
	// A shape within the cap but over the memory budget names the file and the shape.
	budgetPath := write("budget.npy", withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 2), }"))
	if _, err := ReadNPY(budgetPath); err == nil || !strings.Contains(err.Error(), budgetPath) || !strings.Contains(err.Error(), "shape [1000000000 2]") {
		t.Errorf("over the budget: %v; want an error naming the file and the shape", err)
	}
	missing := filepath.Join(dir, "missing.npy")
	if _, err := ReadNPY(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
}

// Python's literal syntax allows keys in any order, double quotes, extra
// spaces, a 1-D shape without a trailing comma and Fortran order for 1-D.
func TestReadHeaderVariants(t *testing.T) {
	for _, h := range []string{
		`{"shape": (2,), "fortran_order": False, "descr": "<f4"}`,
		`{ 'descr' : '<f4' , 'fortran_order' : True , 'shape' : ( 2 ) }`,
		`{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }`,
	} {
		b := []byte(npyMagic + "\x01\x00")
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)+1))
		b = append(append(b, h...), '\n')
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(1))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(-2))
		a, err := DecodeNPY(b)
		if err != nil || !slices.Equal(a.Data, []float64{1, -2}) {
			t.Errorf("%s: %v %v", h, a, err)
		}
	}
}

// numpy itself loads what we write (skipped where Debian's python3-numpy
// is not installed).
func TestNumpyLoadsOurFiles(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("no python3 with numpy at " + py)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npy")
	b := filepath.Join(dir, "b.npy")
	if err := WriteNPY32(a, []float32{0.25, -1, 3, 4, 5, 6}, 2, 3); err != nil {
		t.Fatal(err)
	}
	if err := WriteNPY64(b, []float64{math.E}, 1); err != nil {
		t.Fatal(err)
	}
	script := `import sys, numpy as np
a = np.load(sys.argv[1]); b = np.load(sys.argv[2])
print(a.dtype, a.shape, a.flags['C_CONTIGUOUS'], a.tolist(), b.dtype, b.shape, repr(float(b[0])))`
	out, err := exec.Command(py, "-c", script, a, b).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	want := "float32 (2, 3) True [[0.25, -1.0, 3.0], [4.0, 5.0, 6.0]] float64 (1,) 2.718281828459045\n"
	if string(out) != want {
		t.Errorf("numpy read %q, want %q", out, want)
	}
}

func FuzzDecodeNPY(f *testing.F) {
	for _, name := range []string{"f4_2d.npy", "f8_1d.npy", "f4_2d_v3.npy", "fortran.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeNPY(b)
		if err != nil {
			return
		}
		if n := a.Rows() * a.Cols(); n != len(a.Data) {
			t.Errorf("shape %v but %d values", a.Shape, len(a.Data))
		}
	})
}

// TestStreamMatchesNumpyBytes: a file streamed in blocks of 1, 4 and 1
// values is byte for byte numpy's; too few or too many values write nothing.
func TestStreamMatchesNumpyBytes(t *testing.T) {
	dir := t.TempDir()
	f32 := make([]float32, len(goldenF4))
	for i, v := range goldenF4 {
		f32[i] = float32(v)
	}
	p := filepath.Join(dir, "a.npy")
	err := StreamNPY32(p, []int{3, 2}, func(emit func([]float32) error) error {
		for _, block := range [][]float32{f32[:1], f32[1:5], f32[5:]} {
			if err := emit(block); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	assertSameBytes(t, p, "testdata/f4_2d.npy")
	for name, blocks := range map[string][][]float32{"short": {f32[:5]}, "long": {f32, f32[:1]}} {
		q := filepath.Join(dir, name+".npy")
		emitted := 0
		err := StreamNPY32(q, []int{3, 2}, func(emit func([]float32) error) error {
			for _, b := range blocks {
				if err := emit(b); err != nil {
					return err
				}
				emitted++
			}
			return nil
		})
		if name == "long" && emitted != 1 {
			t.Errorf("long: %d blocks accepted, want the one that fits (emit must refuse the excess)", emitted)
		}
		if _, serr := os.Stat(q); err == nil || serr == nil {
			t.Errorf("%s: error %v, file left: %v", name, err, serr == nil)
		}
	}
	if err := StreamNPY32(p, []int{1 << 62, 8}, func(func([]float32) error) error { return nil }); err == nil {
		t.Error("a shape of 2⁶⁵ values was accepted")
	}
	assertSameBytes(t, p, "testdata/f4_2d.npy")
}
