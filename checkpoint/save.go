package checkpoint

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"holdgo/internal/atomicfile"
)

// Save writes tensors and meta to path in the safetensors format.
//
// The write is atomic: the bytes go to a temporary file in the same
// directory, which is fsynced, renamed over path, and the directory is
// fsynced. If Save fails, a file already at path is left as it was.
//
// The bytes are deterministic: metadata keys are sorted, and tensors are
// laid out in the given order except that F64 tensors come before F32 ones
// (a stable partition, as the reference writer does, so every tensor starts
// at a multiple of its element size). Load's Names reports the file order.
// A new file gets mode 0644; an existing file keeps its mode.
func Save(path string, tensors []Tensor, meta map[string]string) error {
	ordered, header, err := plan(tensors, meta)
	if err != nil {
		return fmt.Errorf("checkpoint %s: save: %w", path, err)
	}
	return writeAtomic(path, func(w io.Writer) error {
		return writeFile(w, header, ordered)
	})
}

// plan validates the tensors and metadata, orders the tensors and returns
// them with the encoded header: the 8-byte length followed by the JSON,
// space-padded to a multiple of 8 bytes.
func plan(tensors []Tensor, meta map[string]string) ([]Tensor, []byte, error) {
	seen := make(map[string]bool, len(tensors))
	for i, t := range tensors {
		switch {
		case t.Name == "":
			return nil, nil, fmt.Errorf("%w: tensor %d has an empty name", ErrInvalid, i)
		case t.Name == metadataKey:
			return nil, nil, fmt.Errorf("%w: tensor name %q is reserved", ErrInvalid, t.Name)
		case !utf8.ValidString(t.Name):
			return nil, nil, fmt.Errorf("%w: tensor name %q is not valid UTF-8", ErrInvalid, t.Name)
		case seen[t.Name]:
			return nil, nil, fmt.Errorf("%w: tensor %q appears twice", ErrInvalid, t.Name)
		case t.Data != nil && t.Data64 != nil:
			return nil, nil, fmt.Errorf("%w: tensor %q sets both Data and Data64", ErrInvalid, t.Name)
		}
		seen[t.Name] = true
		count, ok := elements(t.Shape)
		if !ok {
			return nil, nil, fmt.Errorf("%w: tensor %q: invalid shape %v", ErrInvalid, t.Name, t.Shape)
		}
		if count != t.len() {
			return nil, nil, fmt.Errorf("tensor %q: %w: shape %v holds %d values, data has %d",
				t.Name, ErrShape, t.Shape, count, t.len())
		}
	}
	for key, value := range meta {
		if !utf8.ValidString(key) || !utf8.ValidString(value) {
			return nil, nil, fmt.Errorf("%w: metadata %q is not valid UTF-8", ErrInvalid, key)
		}
	}

	ordered := slices.Clone(tensors)
	slices.SortStableFunc(ordered, func(a, b Tensor) int {
		return cmp.Compare(b.DType().Bits(), a.DType().Bits())
	})

	var js bytes.Buffer
	js.WriteByte('{')
	if len(meta) > 0 {
		js.WriteString(`"` + metadataKey + `":{`)
		for i, key := range slices.Sorted(maps.Keys(meta)) {
			if i > 0 {
				js.WriteByte(',')
			}
			writeJSONString(&js, key)
			js.WriteByte(':')
			writeJSONString(&js, meta[key])
		}
		js.WriteByte('}')
	}
	offset := 0
	for i, t := range ordered {
		if i > 0 || len(meta) > 0 {
			js.WriteByte(',')
		}
		size := t.len() * t.DType().Bits() / 8
		writeJSONString(&js, t.Name)
		js.WriteString(`:{"dtype":"` + string(t.DType()) + `","shape":[`)
		for j, dim := range t.Shape {
			if j > 0 {
				js.WriteByte(',')
			}
			js.WriteString(strconv.Itoa(dim))
		}
		fmt.Fprintf(&js, `],"data_offsets":[%d,%d]}`, offset, offset+size)
		offset += size
	}
	js.WriteByte('}')
	for js.Len()%8 != 0 {
		js.WriteByte(' ')
	}
	if js.Len() > maxHeaderLen {
		return nil, nil, fmt.Errorf("%w: header is %d bytes, over the %d-byte limit readers accept",
			ErrInvalid, js.Len(), maxHeaderLen)
	}
	header := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+js.Len()), uint64(js.Len()))
	return ordered, append(header, js.Bytes()...), nil
}

// writeJSONString writes s as a JSON string, without the HTML escaping that
// json.Marshal applies (so names like "a<b" stay readable in the header).
func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a valid UTF-8 string always encodes
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
}

// writeFile writes the header and then each tensor's data, little-endian.
func writeFile(w io.Writer, header []byte, tensors []Tensor) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(header); err != nil {
		return err
	}
	scratch := make([]byte, 64<<10)
	for _, t := range tensors {
		if err := writeData(bw, t, scratch); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeData encodes t's values through scratch, one chunk at a time.
func writeData(w io.Writer, t Tensor, scratch []byte) error {
	for rest := t.Data64; len(rest) > 0; {
		n := min(len(rest), len(scratch)/8)
		for i, v := range rest[:n] {
			binary.LittleEndian.PutUint64(scratch[8*i:], math.Float64bits(v))
		}
		if _, err := w.Write(scratch[:8*n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	for rest := t.Data; len(rest) > 0; {
		n := min(len(rest), len(scratch)/4)
		for i, v := range rest[:n] {
			binary.LittleEndian.PutUint32(scratch[4*i:], math.Float32bits(v))
		}
		if _, err := w.Write(scratch[:4*n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// writeAtomic writes path atomically (package atomicfile).
func writeAtomic(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("checkpoint %s: save: %w", path, err)
	}
	return nil
}
