// Package checkpoint reads and writes tensors in the safetensors format, so
// that files written here open with Python's safetensors (and torch), and
// files written there open here.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON header,
// then one byte buffer holding every tensor, little-endian, row-major, laid
// out back to back:
//
//	{"__metadata__": {"step": "1200", "config": "{...}"},
//	 "w1": {"dtype": "F32", "shape": [128, 7], "data_offsets": [0, 3584]}, ...}
//
// Offsets are relative to the start of the buffer. Save pads the header with
// spaces to a multiple of 8 bytes, as the reference implementation does.
//
// Writing:
//
//	meta := map[string]string{}
//	checkpoint.SetStep(meta, step)
//	if err := checkpoint.SetJSON(meta, checkpoint.KeyConfig, cfg); err != nil { ... }
//	err := checkpoint.Save(path, []checkpoint.Tensor{
//		{Name: "w1", Shape: []int{128, 7}, Data: w1},
//		{Name: "coef", Shape: []int{5}, Data64: coef},
//	}, meta)
//
// Reading:
//
//	f, err := checkpoint.Load(path)
//	w1, err := f.Float32("w1", 128, 7)      // checks dtype and shape
//	err = f.Into("w1", params[off:off+896], 128, 7) // no allocation
//	step, err := f.Step()
//	err = f.GetJSON(checkpoint.KeyConfig, &cfg)
//
// Every error names the file and wraps one of the sentinel errors below, so
// callers can test for it with errors.Is.
package checkpoint

import "errors"

// Sentinel errors; every error from this package that describes a bad file
// or a bad request wraps one of them.
var (
	// ErrTruncated: the file ends before the header or the data it declares.
	ErrTruncated = errors.New("truncated file")
	// ErrCorruptHeader: the header is not valid safetensors JSON, or its
	// offsets, shapes and sizes disagree.
	ErrCorruptHeader = errors.New("corrupt header")
	// ErrDType: the tensor's element type is not the one asked for, or is
	// not a safetensors type at all.
	ErrDType = errors.New("wrong dtype")
	// ErrMissing: no tensor (or metadata key) of that name.
	ErrMissing = errors.New("missing")
	// ErrShape: the tensor's shape (or the destination's length) is not
	// the one asked for.
	ErrShape = errors.New("shape mismatch")
	// ErrInvalid: Save was given tensors or metadata it cannot write.
	ErrInvalid = errors.New("invalid argument")
)

// Tensor is one named array to save. Set Data to write it as F32, or
// Data64 to write it as F64; not both. Shape is row-major and its product
// must equal the data length; an empty Shape is a scalar (one element).
type Tensor struct {
	Name   string
	Shape  []int
	Data   []float32
	Data64 []float64
}

// DType returns the element type Save writes for t.
func (t Tensor) DType() DType {
	if t.Data64 != nil {
		return F64
	}
	return F32
}

func (t Tensor) len() int {
	if t.Data64 != nil {
		return len(t.Data64)
	}
	return len(t.Data)
}

// TensorInfo describes one tensor as the file header declares it.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int
	// Begin and End are byte offsets into the data buffer (after the header).
	Begin, End int
}

// maxHeaderLen is the largest header accepted, the same limit as the
// reference implementation (100 MB); it bounds what a hostile length can
// make us allocate.
const maxHeaderLen = 100_000_000

// metadataKey is the reserved header key that holds the string metadata.
const metadataKey = "__metadata__"
