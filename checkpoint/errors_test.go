package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawFile assembles a file from a literal header (not padded) and data.
func rawFile(header string, data []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(out, header...), data...)
}

// validFile returns the bytes of a small valid checkpoint and its header length.
func validFile(t *testing.T) ([]byte, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "valid")
	err := Save(path, []Tensor{
		{Name: "w", Shape: []int{128, 6}, Data: ramp(768)},
		{Name: "b", Shape: []int{6}, Data: ramp(6)},
		{Name: "c", Shape: []int{2}, Data64: []float64{1, 2}},
	}, map[string]string{KeyStep: "10"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, int(binary.LittleEndian.Uint64(data))
}

// loadBytes writes data to a file and loads it.
func loadBytes(t *testing.T, data []byte) (string, *File, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	return path, f, err
}

// checkErr fails unless err wraps want and its message names the file and
// contains every one of the phrases.
func checkErr(t *testing.T, err error, want error, path string, phrases ...string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want one wrapping %q", err, want)
	}
	msg := err.Error()
	for _, p := range append([]string{path}, phrases...) {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not mention %q", msg, p)
		}
	}
}

func TestLoadTruncated(t *testing.T) {
	data, headerLen := validFile(t)
	cuts := map[string]int{
		"empty":              0,
		"inside length":      5,
		"just the length":    8,
		"inside header":      8 + headerLen/2,
		"header only":        8 + headerLen,
		"inside first value": 8 + headerLen + 3,
		"last byte missing":  len(data) - 1,
	}
	for name, n := range cuts {
		t.Run(name, func(t *testing.T) {
			path, _, err := loadBytes(t, data[:n])
			checkErr(t, err, ErrTruncated, path, "truncated file")
		})
	}
}

func TestLoadHeaderLengthBeyondFile(t *testing.T) {
	data, _ := validFile(t)
	binary.LittleEndian.PutUint64(data, uint64(len(data))) // 8 more than there is
	path, _, err := loadBytes(t, data)
	checkErr(t, err, ErrTruncated, path, fmt.Sprintf("header length is %d bytes", len(data)))

	// A hostile length must be refused before anything is allocated for it.
	for _, n := range []uint64{maxHeaderLen + 1, 1 << 40, 1<<63 + 5, ^uint64(0)} {
		binary.LittleEndian.PutUint64(data, n)
		path, _, err := loadBytes(t, data)
		checkErr(t, err, ErrCorruptHeader, path, "over the")
	}
}

func TestLoadCorruptHeader(t *testing.T) {
	data, headerLen := validFile(t)
	header := string(data[8 : 8+headerLen])
	body := data[8+headerLen:]
	w := `"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`
	eight := make([]byte, 8)
	cases := []struct {
		name   string
		file   []byte
		phrase string
	}{
		{"broken JSON", rawFile(strings.Replace(header, `"shape":[128,6]`, `"shape":[128,6`, 1), body), `"w"`},
		{"cut JSON", rawFile(header[:len(header)/2], body), "corrupt header"},
		{"not an object", rawFile(`[1,2]`, nil), "not a JSON object"},
		{"not UTF-8", rawFile("{\"\xff\":1}", nil), "UTF-8"},
		{"trailing garbage", rawFile(`{}  x`, nil), "after the JSON object"},
		{"duplicate key", rawFile(`{`+w+`,`+w+`}`, eight), `"w" appears twice`},
		{"entry not an object", rawFile(`{"w":3}`, nil), `tensor "w"`},
		{"no dtype", rawFile(`{"w":{"shape":[2],"data_offsets":[0,8]}}`, eight), "no dtype"},
		{"no shape", rawFile(`{"w":{"dtype":"F32","data_offsets":[0,8]}}`, eight), "no shape"},
		{"no offsets", rawFile(`{"w":{"dtype":"F32","shape":[2]}}`, eight), "no data_offsets"},
		{"three offsets", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}`, eight), "not [begin, end]"},
		{"negative offset", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}}`, eight), "not an interval"},
		{"reversed offsets", rawFile(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, eight), "not an interval"},
		{"negative dim", rawFile(`{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, eight), "negative or too large"},
		{"overflowing shape", rawFile(`{"w":{"dtype":"F32","shape":[4,4611686018427387904],"data_offsets":[0,8]}}`, eight), "negative or too large"},
		{"shape beyond int64", rawFile(`{"w":{"dtype":"F32","shape":[2,18446744073709551614],"data_offsets":[0,8]}}`, eight), `tensor "w"`},
		{"fractional offset", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8.5]}}`, eight), `tensor "w"`},
		{"shape vs bytes", rawFile(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, eight), "needs 12 bytes"},
		{"half a byte", rawFile(`{"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`, eight[:2]), "whole number of bytes"},
		{"metadata not strings", rawFile(`{"__metadata__":{"step":10}}`, nil), "__metadata__"},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)),
			`"a" [0 8] and "b" [4 12] overlap`},
		{"same range twice", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, eight), "overlap"},
		{"gap", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, make([]byte, 12)),
			"[4 8] before tensor \"b\" belong to no tensor"},
		{"gap at start", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight), "[0 4]"},
		{"trailing data", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, eight), "4 data bytes after the last tensor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, _, err := loadBytes(t, tc.file)
			checkErr(t, err, ErrCorruptHeader, path, tc.phrase)
		})
	}
}

func TestWrongDType(t *testing.T) {
	header := `{"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},` +
		`"d":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}}`
	path, f, err := loadBytes(t, rawFile(header, make([]byte, 16)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Float32("h")
	checkErr(t, err, ErrDType, path, `tensor "h"`, "file has F16, want F32")
	err = f.Into("h", make([]float32, 2))
	checkErr(t, err, ErrDType, path, "F16")
	_, err = f.Float64("w")
	checkErr(t, err, ErrDType, path, `tensor "w"`, "file has F32, want F64")
	err = f.Into64("w", make([]float64, 1))
	checkErr(t, err, ErrDType, path, "F32")
	_, err = f.Float32("d")
	checkErr(t, err, ErrDType, path, "file has F64, want F32")

	// A dtype safetensors does not define fails at Load.
	path, _, err = loadBytes(t, rawFile(`{"q":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)))
	checkErr(t, err, ErrDType, path, `tensor "q"`, `"F128" is not a safetensors dtype`)
}

func TestMissingTensor(t *testing.T) {
	data, _ := validFile(t)
	path, f, err := loadBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Float32("w2")
	checkErr(t, err, ErrMissing, path, `tensor "w2": missing`, `the file has "c", "w", "b"`)
	checkErr(t, f.Into("w2", nil), ErrMissing, path)
	_, err = f.Float64("w2")
	checkErr(t, err, ErrMissing, path)
	_, err = f.Info("w2")
	checkErr(t, err, ErrMissing, path)

	// Many tensors: the list is cut short.
	var many []Tensor
	for i := range 20 {
		many = append(many, Tensor{Name: fmt.Sprintf("t%02d", i), Shape: []int{1}, Data: []float32{1}})
	}
	manyPath := filepath.Join(t.TempDir(), "many")
	if err := Save(manyPath, many, nil); err != nil {
		t.Fatal(err)
	}
	if f, err = Load(manyPath); err != nil {
		t.Fatal(err)
	}
	_, err = f.Float32("nope")
	checkErr(t, err, ErrMissing, manyPath, "the file has 20 tensors: \"t00\"", ", ...")

	_, _, err = loadBytes(t, rawFile(`{}`, nil))
	if err != nil {
		t.Fatal(err)
	}
}

func TestShapeMismatch(t *testing.T) {
	data, _ := validFile(t)
	path, f, err := loadBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Float32("w", 128, 7)
	checkErr(t, err, ErrShape, path)
	if want := fmt.Sprintf("checkpoint %s: tensor \"w\": shape mismatch: want [128 7], file has [128 6]", path); err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
	_, err = f.Float32("w", 768) // same size, different shape
	checkErr(t, err, ErrShape, path, "want [768], file has [128 6]")
	err = f.Into("w", make([]float32, 768), 6, 128)
	checkErr(t, err, ErrShape, path, "want [6 128]")
	_, err = f.Float64("c", 1, 2)
	checkErr(t, err, ErrShape, path, "want [1 2], file has [2]")

	// Into's destination must match the tensor's length.
	err = f.Into("w", make([]float32, 767))
	checkErr(t, err, ErrShape, path, "destination holds 767 values", "holds 768")
	err = f.Into64("c", make([]float64, 3))
	checkErr(t, err, ErrShape, path, "destination holds 3 values")

	// With no shape given any shape is accepted.
	if _, err := f.Float32("w"); err != nil {
		t.Error(err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent")
	_, err := Load(path)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want a not-exist error naming %s", err, path)
	}
}
