package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"holdgo/internal/budget"
)

// The .npz format (numpy.savez, savez_compressed): a zip archive holding one
// .npy file per array, named KEY.npy, stored or deflated. pytorch-fid's
// statistics files are .npz archives with the keys mu (d,) and sigma (d, d).

// maxNPZEntry bounds the size of one decompressed array (4 GiB would be a
// 23,000² float64 covariance; a hostile archive must not make us allocate more).
const maxNPZEntry = 1 << 32

// ReadNPZ reads every array of a .npz file, keyed by name without ".npy".
// Errors name the file and the entry.
func ReadNPZ(path string) (map[string]*Array, error) {
	b, err := budget.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read npz: %w", err)
	}
	out, err := DecodeNPZ(b)
	if err != nil {
		return nil, fmt.Errorf("read npz %s: %w", path, err)
	}
	return out, nil
}

// DecodeNPZ decodes the bytes of a .npz file (see ReadNPZ).
func DecodeNPZ(b []byte) (map[string]*Array, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%w: not a zip archive (.npz): %v", ErrNPY, err)
	}
	out := map[string]*Array{}
	tr := budget.New("npz")
	for _, f := range zr.File {
		key, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("%w: entry %q is not a .npy file", ErrNPY, f.Name)
		}
		if f.UncompressedSize64 > maxNPZEntry || (f.Method != zip.Store && f.UncompressedSize64/1100 > f.CompressedSize64) {
			return nil, fmt.Errorf("%w: entry %q declares %d bytes from %d compressed", ErrNPY, f.Name, f.UncompressedSize64, f.CompressedSize64)
		}
		// The raw entry and its float64 values (up to twice the bytes for float32).
		if err := tr.Take(3*int64(f.UncompressedSize64), "entry "+f.Name); err != nil {
			return nil, err
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%w: entry %q: %v", ErrNPY, f.Name, err)
		}
		raw, err := io.ReadAll(budget.LimitReader(rc, int64(f.UncompressedSize64), "entry "+f.Name))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: entry %q: %v", ErrNPY, f.Name, err)
		}
		a, err := DecodeNPY(raw)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", f.Name, err)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%w: entry %q appears twice", ErrNPY, f.Name)
		}
		out[key] = a
	}
	return out, nil
}

// WriteNPZ writes float64 arrays as an uncompressed .npz file (as
// numpy.savez does), atomically; each array's shape is (n,) or (n, d).
func WriteNPZ(path string, arrays map[string]*Array) error {
	keys := make([]string, 0, len(arrays))
	for k := range arrays {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, k := range keys {
		a := arrays[k]
		count := 1
		for _, s := range a.Shape {
			count *= s
		}
		if (len(a.Shape) != 1 && len(a.Shape) != 2) || count != len(a.Data) {
			return fmt.Errorf("write npz %s: array %q: shape %v for %d values (want (n,) or (n, d))", path, k, a.Shape, len(a.Data))
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: k + ".npy", Method: zip.Store})
		if err != nil {
			return fmt.Errorf("write npz %s: %w", path, err)
		}
		body := make([]byte, 8*len(a.Data))
		for i, v := range a.Data {
			binary.LittleEndian.PutUint64(body[8*i:], math.Float64bits(v))
		}
		if _, err := w.Write(append(encodeHeader(Float64, a.Shape), body...)); err != nil {
			return fmt.Errorf("write npz %s: %w", path, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write npz %s: %w", path, err)
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}
