package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"holdgo/internal/budget"
)

// pickleText builds pickle bytes: each part is raw bytes.
type pickleText struct{ bytes.Buffer }

func (p *pickleText) str(s string) { // BINUNICODE
	p.WriteByte('X')
	binary.Write(p, binary.LittleEndian, uint32(len(s)))
	p.WriteString(s)
}

func (p *pickleText) int4(v int32) { p.WriteByte('J'); binary.Write(p, binary.LittleEndian, v) }

func (p *pickleText) long8(v uint64) {
	p.WriteString("\x8a\x08")
	binary.Write(p, binary.LittleEndian, v)
}

// statePickle is the pickle of {"w": tensor} whose storage declares numel
// float32 elements, viewed with shape and stride from offset.
func statePickle(numel uint64, offset int32, shape, stride []int32) []byte {
	var p pickleText
	p.WriteString("\x80\x02}(")
	p.str("w")
	p.WriteString("ctorch._utils\n_rebuild_tensor_v2\n(")
	p.WriteByte('(')
	p.str("storage")
	p.WriteString("ctorch\nFloatStorage\n")
	p.str("0")
	p.str("cpu")
	p.long8(numel)
	p.WriteString("NtQ")
	p.int4(offset)
	for _, tup := range [][]int32{shape, stride} {
		p.WriteByte('(')
		for _, v := range tup {
			p.int4(v)
		}
		p.WriteByte('t')
	}
	p.WriteString("\x89NtRu.")
	return p.Bytes()
}

// legacyFile is a legacy torch.save file of statePickle whose storage
// section says count elements and holds the given float32 values.
func legacyFile(main []byte, count uint64, values []float32) []byte {
	var b bytes.Buffer
	b.WriteString(legacyMagic)
	b.WriteString("\x80\x02M\xe9\x03.") // protocol 1001
	b.WriteString("\x80\x02}.")         // system information
	b.Write(main)
	var keys pickleText
	keys.WriteString("\x80\x02](")
	keys.str("0")
	keys.WriteString("e.")
	b.Write(keys.Bytes())
	binary.Write(&b, binary.LittleEndian, count)
	binary.Write(&b, binary.LittleEndian, values)
	return b.Bytes()
}

// zipFile is the zip form: archive/data.pkl and the storage archive/data/0.
func zipFile(t testing.TB, main []byte, values []float32) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, e := range []struct {
		name string
		data []byte
	}{{"archive/data.pkl", main}, {"archive/data/0", f32bytes(values)}} {
		f, err := w.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(e.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func f32bytes(v []float32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, v)
	return b.Bytes()
}

func writeTemp(t testing.TB, b []byte) string {
	p := filepath.Join(t.TempDir(), "f.pth")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuiltFiles: the hand-built files load (so the hostile variants below
// differ from a good file only in what they declare).
func TestBuiltFiles(t *testing.T) {
	vals := []float32{1, 2, 3, 4, 5, 6}
	main := statePickle(6, 0, []int32{2, 3}, []int32{3, 1})
	for name, b := range map[string][]byte{"legacy": legacyFile(main, 6, vals), "zip": zipFile(t, main, vals)} {
		f, err := Load(writeTemp(t, b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := f.Float32("w", 2, 3); !slices.Equal(got, vals) {
			t.Fatalf("%s: w = %v", name, got)
		}
	}
}

// TestDeclaredSizes: a few hundred bytes declaring gigabytes are refused
// with an error before anything of that size is allocated (the test runs
// under a 256 MiB budget, so an allocation would show as a budget error at
// best and an out-of-memory crash at worst).
func TestDeclaredSizes(t *testing.T) {
	defer budget.SetLimit(budget.Limit())
	budget.SetLimit(256 << 20)
	good := statePickle(6, 0, []int32{6}, []int32{1})
	vals := []float32{1, 2, 3, 4, 5, 6}
	frame := append([]byte("\x80\x04\x95"), binary.LittleEndian.AppendUint64(nil, 1<<40)...)
	frame = append(frame, good[2:]...)
	uni8 := append([]byte("\x80\x04}(\x8d"), binary.LittleEndian.AppendUint64(nil, 1<<40)...)
	uni8 = append(uni8, "w"...)
	bytes8 := append([]byte("\x80\x04}(\x8e"), binary.LittleEndian.AppendUint64(nil, 1<<62)...)
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"legacy storage of 2^34 elements", legacyFile(statePickle(1<<34, 0, []int32{6}, []int32{1}), 1<<34, vals), "truncated"},
		{"legacy storage count differs", legacyFile(good, 1<<40, vals), "declared"},
		{"legacy FRAME of 2^40", legacyFile(frame, 6, vals), "declares"},
		{"legacy BINUNICODE8 of 2^40", legacyFile(uni8, 6, vals), "declares"},
		{"legacy BINBYTES8 of 2^62", legacyFile(bytes8, 6, vals), "declares"},
		{"legacy stride-0 view of 2^30", legacyFile(statePickle(1, 0, []int32{1 << 30}, []int32{0}), 1, vals[:1]), "budget"},
		{"legacy truncated data", legacyFile(good, 6, vals[:3]), "truncated"},
		{"zip storage of 2^34 elements", zipFile(t, statePickle(1<<34, 0, []int32{6}, []int32{1}), vals), "record holds"},
		{"zip FRAME of 2^40", zipFile(t, frame, vals), "declares"},
		{"zip BINUNICODE8 of 2^40", zipFile(t, uni8, vals), "declares"},
		{"zip stride-0 view of 2^30", zipFile(t, statePickle(1, 0, []int32{1 << 30}, []int32{0}), vals[:1]), "budget"},
		{"zip view past the storage", zipFile(t, statePickle(6, 4, []int32{6}, []int32{1}), vals), "reach element"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.file) > 1000 {
				t.Fatalf("the hostile file is %d bytes, want a small one", len(tc.file))
			}
			_, err := Load(writeTemp(t, tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, tc.want)
			}
			if tc.want == "budget" && !errors.Is(err, budget.ErrExceeded) {
				t.Fatalf("Load: %v, want budget.ErrExceeded", err)
			}
		})
	}
}

// TestNotRegular: a FIFO named .pth is refused without opening it (an
// open would block).
func TestNotRegular(t *testing.T) {
	if _, err := Load(t.TempDir()); !errors.Is(err, budget.ErrNotRegular) {
		t.Fatalf("Load of a directory: %v", err)
	}
}
