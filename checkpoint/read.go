package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Names returns the tensor names in file order (by offset).
func (f *File) Names() []string {
	names := make([]string, len(f.tensors))
	for i, t := range f.tensors {
		names[i] = t.Name
	}
	return names
}

// Info returns the header entry of the named tensor.
func (f *File) Info(name string) (TensorInfo, error) {
	i, ok := f.index[name]
	if !ok {
		return TensorInfo{}, f.missing(name)
	}
	info := f.tensors[i]
	info.Shape = slices.Clone(info.Shape)
	return info, nil
}

// Float32 returns a new slice with the named F32 tensor's values. If shape
// is given, the tensor must have exactly that shape; with no shape, any
// shape is accepted (use Info to see it).
func (f *File) Float32(name string, shape ...int) ([]float32, error) {
	info, err := f.lookup(name, F32, shape)
	if err != nil {
		return nil, err
	}
	out := make([]float32, (info.End-info.Begin)/4)
	decodeF32(out, f.data[info.Begin:info.End])
	return out, nil
}

// Into copies the named F32 tensor into dst, which must have exactly as
// many elements as the tensor, without allocating. Shape is checked as in
// Float32.
func (f *File) Into(name string, dst []float32, shape ...int) error {
	info, err := f.lookup(name, F32, shape)
	if err != nil {
		return err
	}
	if n := (info.End - info.Begin) / 4; len(dst) != n {
		return f.dstMismatch(info, len(dst), n)
	}
	decodeF32(dst, f.data[info.Begin:info.End])
	return nil
}

// Float64 returns a new slice with the named F64 tensor's values; see
// Float32. An F32 tensor is not widened: asking for it here is ErrDType.
func (f *File) Float64(name string, shape ...int) ([]float64, error) {
	info, err := f.lookup(name, F64, shape)
	if err != nil {
		return nil, err
	}
	out := make([]float64, (info.End-info.Begin)/8)
	decodeF64(out, f.data[info.Begin:info.End])
	return out, nil
}

// Into64 copies the named F64 tensor into dst; see Into.
func (f *File) Into64(name string, dst []float64, shape ...int) error {
	info, err := f.lookup(name, F64, shape)
	if err != nil {
		return err
	}
	if n := (info.End - info.Begin) / 8; len(dst) != n {
		return f.dstMismatch(info, len(dst), n)
	}
	decodeF64(dst, f.data[info.Begin:info.End])
	return nil
}

// lookup finds the named tensor and checks its dtype and, if shape is not
// empty, its shape.
func (f *File) lookup(name string, want DType, shape []int) (*TensorInfo, error) {
	i, ok := f.index[name]
	if !ok {
		return nil, f.missing(name)
	}
	info := &f.tensors[i]
	if info.DType != want {
		return nil, fmt.Errorf("checkpoint %s: tensor %q: %w: file has %s, want %s",
			f.Path, name, ErrDType, info.DType, want)
	}
	if len(shape) > 0 && !slices.Equal(shape, info.Shape) {
		return nil, fmt.Errorf("checkpoint %s: tensor %q: %w: want %v, file has %v",
			f.Path, name, ErrShape, slices.Clone(shape), info.Shape) // a clone keeps shape on the caller's stack
	}
	return info, nil
}

func (f *File) dstMismatch(info *TensorInfo, got, want int) error {
	return fmt.Errorf("checkpoint %s: tensor %q: %w: destination holds %d values, tensor %v holds %d",
		f.Path, info.Name, ErrShape, got, info.Shape, want)
}

// missing reports a tensor that is not in the file, listing (up to a
// point) the ones that are.
func (f *File) missing(name string) error {
	const show = 8
	names := f.Names()
	var have string
	switch {
	case len(names) == 0:
		have = "the file has no tensors"
	case len(names) <= show:
		have = "the file has " + strings.Join(quoteAll(names), ", ")
	default:
		have = fmt.Sprintf("the file has %d tensors: %s, ...", len(names), strings.Join(quoteAll(names[:show]), ", "))
	}
	return fmt.Errorf("checkpoint %s: tensor %q: %w (%s)", f.Path, name, ErrMissing, have)
}

func quoteAll(names []string) []string {
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = fmt.Sprintf("%q", name)
	}
	return quoted
}

// decodeF32 decodes len(dst) little-endian float32 values from src, bit
// for bit (NaN payloads included).
func decodeF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

// decodeF64 decodes len(dst) little-endian float64 values from src.
func decodeF64(dst []float64, src []byte) {
	src = src[:8*len(dst)]
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
	}
}
