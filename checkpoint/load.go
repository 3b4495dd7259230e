package checkpoint

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"holdgo/internal/budget"
)

// File is a loaded safetensors file: its metadata, its header entries, and
// its data, read into memory in one go.
type File struct {
	Path string
	// Meta is the header's "__metadata__" block; never nil.
	Meta map[string]string

	tensors []TensorInfo   // in file order (by offset)
	index   map[string]int // name -> position in tensors
	data    []byte         // the data buffer that follows the header
}

// Load reads the file at path and validates its header completely: the
// JSON, the dtypes, that every shape matches its byte length, and that the
// tensors tile the data buffer exactly (no gap, no overlap, nothing past
// the end, nothing after the last tensor). Tensor data is decoded later,
// by Float32, Into, Float64 and Into64.
func Load(path string) (*File, error) {
	data, err := budget.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return parse(path, data)
}

// parse is Load on bytes already in memory; path is used in errors only.
func parse(path string, data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("checkpoint %s: %w: %d bytes, too short for the 8-byte header length",
			path, ErrTruncated, len(data))
	}
	headerLen := binary.LittleEndian.Uint64(data)
	if headerLen > maxHeaderLen {
		return nil, fmt.Errorf("checkpoint %s: %w: header length %d is over the %d-byte limit",
			path, ErrCorruptHeader, headerLen, maxHeaderLen)
	}
	if headerLen > uint64(len(data)-8) {
		return nil, fmt.Errorf("checkpoint %s: %w: header length is %d bytes but only %d bytes follow it",
			path, ErrTruncated, headerLen, len(data)-8)
	}
	header, buf := data[8:8+headerLen], data[8+headerLen:]

	tensors, meta, err := parseHeader(header)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := checkLayout(tensors, len(buf)); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	f := &File{Path: path, Meta: meta, tensors: tensors, index: make(map[string]int, len(tensors)), data: buf}
	for i, t := range tensors {
		f.index[t.Name] = i
	}
	return f, nil
}

// parseHeader decodes the JSON header into tensor entries (in header order)
// and the metadata map. It rejects duplicate keys, which encoding/json would
// otherwise silently resolve to the last one.
func parseHeader(header []byte) ([]TensorInfo, map[string]string, error) {
	if !utf8.Valid(header) {
		return nil, nil, fmt.Errorf("%w: not valid UTF-8", ErrCorruptHeader)
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("%w: not a JSON object", ErrCorruptHeader)
	}
	meta := map[string]string{}
	var tensors []TensorInfo
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s", ErrCorruptHeader, jsonProblem(err))
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("%w: unexpected %v", ErrCorruptHeader, tok)
		}
		if seen[key] {
			return nil, nil, fmt.Errorf("%w: key %q appears twice", ErrCorruptHeader, key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("%w: value of %q: %s", ErrCorruptHeader, key, jsonProblem(err))
		}
		if key == metadataKey {
			if err := json.Unmarshal(raw, &meta); err != nil {
				return nil, nil, fmt.Errorf("%w: %s must map strings to strings: %v", ErrCorruptHeader, metadataKey, err)
			}
			if meta == nil { // "__metadata__": null
				meta = map[string]string{}
			}
			continue
		}
		info, err := parseEntry(key, raw)
		if err != nil {
			return nil, nil, err
		}
		tensors = append(tensors, info)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, fmt.Errorf("%w: %s", ErrCorruptHeader, jsonProblem(err))
	}
	if rest := bytes.TrimLeft(header[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, nil, fmt.Errorf("%w: %d unexpected bytes after the JSON object", ErrCorruptHeader, len(rest))
	}
	return tensors, meta, nil
}

// jsonProblem describes a JSON syntax error in the header.
func jsonProblem(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends early"
	}
	return err.Error()
}

// excerpt shortens a header fragment for an error message.
func excerpt(raw []byte) string {
	const limit = 40
	if len(raw) > limit {
		return strings.ToValidUTF8(string(raw[:limit]), "") + "..."
	}
	return string(raw)
}

// parseEntry decodes and checks one tensor entry on its own: known dtype,
// non-negative shape and offsets, and a byte length that matches the shape.
func parseEntry(name string, raw json.RawMessage) (TensorInfo, error) {
	var entry struct {
		DType   *string `json:"dtype"`
		Shape   *[]int  `json:"shape"`
		Offsets *[]int  `json:"data_offsets"`
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: tensor %q: %s", ErrCorruptHeader, name, fmt.Sprintf(format, args...))
	}
	if len(raw) == 0 || raw[0] != '{' { // Decode hands over raw without leading space
		return TensorInfo{}, bad("entry %s is not a JSON object", excerpt(raw))
	}
	if err := json.Unmarshal(raw, &entry); err != nil {
		return TensorInfo{}, bad("%v", err)
	}
	switch {
	case entry.DType == nil:
		return TensorInfo{}, bad("no dtype")
	case entry.Shape == nil:
		return TensorInfo{}, bad("no shape")
	case entry.Offsets == nil:
		return TensorInfo{}, bad("no data_offsets")
	case len(*entry.Offsets) != 2:
		return TensorInfo{}, bad("data_offsets %v is not [begin, end]", *entry.Offsets)
	}
	info := TensorInfo{
		Name:  name,
		DType: DType(*entry.DType),
		Shape: *entry.Shape,
		Begin: (*entry.Offsets)[0],
		End:   (*entry.Offsets)[1],
	}
	if !info.DType.Known() {
		return TensorInfo{}, fmt.Errorf("tensor %q: %w: %q is not a safetensors dtype", name, ErrDType, info.DType)
	}
	if info.Begin < 0 || info.End < info.Begin {
		return TensorInfo{}, bad("data_offsets [%d %d] are not an interval", info.Begin, info.End)
	}
	count, ok := elements(info.Shape)
	bits := info.DType.Bits()
	if !ok || count > math.MaxInt/bits {
		return TensorInfo{}, bad("shape %v is negative or too large", info.Shape)
	}
	if count*bits%8 != 0 {
		return TensorInfo{}, bad("%s%v is not a whole number of bytes", info.DType, info.Shape)
	}
	if size := count * bits / 8; size != info.End-info.Begin {
		return TensorInfo{}, bad("%s%v needs %d bytes but data_offsets [%d %d] span %d",
			info.DType, info.Shape, size, info.Begin, info.End, info.End-info.Begin)
	}
	return info, nil
}

// checkLayout sorts tensors by offset and checks that they tile the data
// buffer of bufLen bytes exactly.
func checkLayout(tensors []TensorInfo, bufLen int) error {
	slices.SortStableFunc(tensors, func(a, b TensorInfo) int {
		return cmp.Or(cmp.Compare(a.Begin, b.Begin), cmp.Compare(a.End, b.End))
	})
	// Report a short buffer first: it is what a truncated file looks like.
	need := 0
	for _, t := range tensors {
		need = max(need, t.End)
	}
	if need > bufLen {
		return fmt.Errorf("%w: the header describes %d data bytes, the file has only %d (%d missing)",
			ErrTruncated, need, bufLen, need-bufLen)
	}
	end := 0
	for i, t := range tensors {
		if t.Begin < end {
			prev := tensors[i-1]
			return fmt.Errorf("%w: tensors %q [%d %d] and %q [%d %d] overlap",
				ErrCorruptHeader, prev.Name, prev.Begin, prev.End, t.Name, t.Begin, t.End)
		}
		if t.Begin > end {
			return fmt.Errorf("%w: data bytes [%d %d] before tensor %q belong to no tensor",
				ErrCorruptHeader, end, t.Begin, t.Name)
		}
		end = t.End
	}
	if end != bufLen {
		return fmt.Errorf("%w: %d data bytes after the last tensor belong to no tensor", ErrCorruptHeader, bufLen-end)
	}
	return nil
}

// elements returns how many values shape holds (1 for a scalar); false if a
// dimension is negative or the product overflows an int.
func elements(shape []int) (int, bool) {
	for _, dim := range shape {
		if dim < 0 {
			return 0, false
		}
	}
	if slices.Contains(shape, 0) {
		return 0, true
	}
	count := 1
	for _, dim := range shape {
		if count > math.MaxInt/dim {
			return 0, false
		}
		count *= dim
	}
	return count, true
}
