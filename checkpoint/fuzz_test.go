package checkpoint

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad checks that no input makes Load panic, that every failure wraps
// one of the sentinel errors, and that whatever loads can be read in full.
// Plain `go test` runs the seed corpus only; fuzz with
// `go test -fuzz FuzzLoad ./checkpoint/`.
func FuzzLoad(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed")
	err := Save(path, []Tensor{
		{Name: "w", Shape: []int{2, 3}, Data: ramp(6)},
		{Name: "s", Data: []float32{1}},
		{Name: "c", Shape: []int{2}, Data64: []float64{1, 2}},
		{Name: "e", Shape: []int{0, 4}},
	}, map[string]string{KeyStep: "3", KeyConfig: `{"a":1}`})
	if err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:20])
	f.Add([]byte{})
	f.Add(rawFile(`{}`, nil))
	f.Add(rawFile(`{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}}`, make([]byte, 8)))
	f.Add(rawFile(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`, make([]byte, 2)))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[9223372036854775807,2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(rawFile(`{"__metadata__":null,"a":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}`, make([]byte, 8)))
	huge := rawFile(`{}`, nil)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	f.Add(huge)

	sentinels := []error{ErrTruncated, ErrCorruptHeader, ErrDType}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parse("fuzz", data)
		if err != nil {
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		for _, name := range file.Names() {
			info, err := file.Info(name)
			if err != nil {
				t.Fatal(err)
			}
			switch info.DType {
			case F32:
				if _, err := file.Float32(name, info.Shape...); err != nil {
					t.Fatal(err)
				}
			case F64:
				if _, err := file.Float64(name, info.Shape...); err != nil {
					t.Fatal(err)
				}
			default:
				if _, err := file.Float32(name); !errors.Is(err, ErrDType) {
					t.Fatalf("reading %s as F32: %v", info.DType, err)
				}
			}
		}
	})
}
