// Package torchfile reads the tensors of a PyTorch state dict saved with
// torch.save: the zip format (PyTorch ≥ 1.6: archive/data.pkl plus one
// storage per archive/data/KEY record) and the legacy format (pickles of a
// magic number, a protocol version, system information, the object and the
// storage keys, followed by the raw storages), which older releases wrote
// and in which pytorch-fid's pt_inception-2015-12-05-6726825d.pth may come.
//
// The pickles are decoded by github.com/nlpodyssey/gopickle. This package
// turns its result into named, contiguous float32 arrays: it accepts a dict
// or OrderedDict of tensors (or such a dict under the key "state_dict"),
// converts float16, bfloat16, float32 and float64 storages, honours tensor
// offsets and strides with bounds checks, and leaves integer tensors (batch
// norm's num_batches_tracked) out. A malformed file is an error, never a
// panic: gopickle panics on some corrupt inputs, and Load recovers them.
package torchfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"

	"holdgo/internal/budget"
)

// ErrFormat is wrapped by every error about a file's content.
var ErrFormat = errors.New("not a PyTorch state dict this reader understands")

// Tensor is one float tensor of the file, contiguous in row-major order.
type Tensor struct {
	Shape []int
	Data  []float32
}

// File is the float tensors of a state dict.
type File struct {
	Path    string
	Tensors map[string]Tensor
	Skipped []string // non-float tensors and non-tensor entries left out
}

// Load reads a .pth/.pt file written by torch.save(state_dict).
//
// Only a regular file is read, and every size the file declares is checked
// against the bytes that hold it and against the memory budget (summed over
// the whole file) before anything of that size is allocated.
func Load(path string) (f *File, err error) {
	st, err := budget.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("torchfile: %w", err)
	}
	zipped, err := checkMagic(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("torchfile %s: %w: the unpickler failed: %v", path, ErrFormat, r)
		}
	}()
	tr := budget.New("torchfile " + path)
	var obj any
	if zipped {
		obj, err = loadZip(path, st.Size(), tr)
	} else {
		obj, err = loadLegacy(path, tr)
	}
	if err != nil {
		return nil, fmt.Errorf("torchfile %s: %w", path, err)
	}
	entries, err := dictEntries(obj)
	if err != nil {
		return nil, fmt.Errorf("torchfile %s: %w", path, err)
	}
	if sd, ok := entries["state_dict"]; ok {
		if entries, err = dictEntries(sd); err != nil {
			return nil, fmt.Errorf("torchfile %s: state_dict: %w", path, err)
		}
	}
	f = &File{Path: path, Tensors: map[string]Tensor{}}
	for name, v := range entries {
		t, ok := v.(*pytorch.Tensor)
		if !ok {
			f.Skipped = append(f.Skipped, name)
			continue
		}
		data, isFloat, err := contiguous(t, tr)
		if err != nil {
			return nil, fmt.Errorf("torchfile %s: tensor %q: %w", path, name, err)
		}
		if !isFloat {
			f.Skipped = append(f.Skipped, name)
			continue
		}
		f.Tensors[name] = Tensor{Shape: slices.Clone(t.Size), Data: data}
	}
	sort.Strings(f.Skipped)
	if len(f.Tensors) == 0 {
		return nil, fmt.Errorf("torchfile %s: %w: no float tensors", path, ErrFormat)
	}
	return f, nil
}

// legacyMagic is how a legacy-format file starts: the pickle (protocol 2)
// of PyTorch's magic number 0x1950a86a20f9469cfc6c as a LONG1.
const legacyMagic = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."

// checkMagic accepts a zip archive or a legacy file by their first bytes.
// gopickle loops forever on an empty file and tries a tar reader on any
// non-zip input, so nothing else reaches it.
func checkMagic(path string) (zipped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("torchfile: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(legacyMagic))
	n, _ := io.ReadFull(f, head)
	if n >= 4 && string(head[:4]) == "PK\x03\x04" {
		return true, nil
	}
	if n == len(head) && string(head) == legacyMagic {
		return false, nil
	}
	return false, fmt.Errorf("torchfile %s: %w: neither a zip archive (torch.save, PyTorch ≥ 1.6) nor a legacy torch.save file", path, ErrFormat)
}

// Names lists the float tensors, sorted.
func (f *File) Names() []string {
	out := make([]string, 0, len(f.Tensors))
	for k := range f.Tensors {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Float32 returns the named tensor's values, checking its shape when one is
// given (the same method as checkpoint.File, so loaders take either).
func (f *File) Float32(name string, shape ...int) ([]float32, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("torchfile %s: no tensor %q (the file has %d tensors, e.g. %s)", f.Path, name, len(f.Tensors), strings.Join(first(f.Names(), 3), ", "))
	}
	if len(shape) > 0 && !slices.Equal(shape, t.Shape) {
		return nil, fmt.Errorf("torchfile %s: tensor %q has shape %v, want %v", f.Path, name, t.Shape, shape)
	}
	return t.Data, nil
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// dictEntries returns the string-keyed entries of a pickled dict or OrderedDict.
func dictEntries(obj any) (map[string]any, error) {
	out := map[string]any{}
	add := func(k, v any) error {
		name, ok := k.(string)
		if !ok {
			return fmt.Errorf("%w: dict key %v is not a string", ErrFormat, k)
		}
		out[name] = v
		return nil
	}
	switch d := obj.(type) {
	case *types.OrderedDict:
		for e := d.List.Front(); e != nil; e = e.Next() {
			entry := e.Value.(*types.OrderedDictEntry)
			if err := add(entry.Key, entry.Value); err != nil {
				return nil, err
			}
		}
	case *types.Dict:
		for _, entry := range *d {
			if err := add(entry.Key, entry.Value); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%w: the top-level object is a %T, want a dict of tensors (torch.save(model.state_dict()))", ErrFormat, obj)
	}
	return out, nil
}

// contiguous copies a (possibly strided) tensor into row-major float32.
func contiguous(t *pytorch.Tensor, tr *budget.Tracker) ([]float32, bool, error) {
	var get func(i int) float32
	var n int
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		n, get = len(s.Data), func(i int) float32 { return s.Data[i] }
	case *pytorch.DoubleStorage:
		n, get = len(s.Data), func(i int) float32 { return float32(s.Data[i]) }
	case *pytorch.HalfStorage:
		n, get = len(s.Data), func(i int) float32 { return s.Data[i] }
	case *pytorch.BFloat16Storage:
		n, get = len(s.Data), func(i int) float32 { return s.Data[i] }
	default:
		return nil, false, nil
	}
	if len(t.Stride) != len(t.Size) || t.StorageOffset < 0 {
		return nil, true, fmt.Errorf("%w: size %v with stride %v, offset %d", ErrFormat, t.Size, t.Stride, t.StorageOffset)
	}
	count, last := 1, t.StorageOffset
	for i, d := range t.Size {
		if d < 0 || t.Stride[i] < 0 || (d > 0 && count > (1<<31)/d) {
			return nil, true, fmt.Errorf("%w: size %v with stride %v", ErrFormat, t.Size, t.Stride)
		}
		count *= d
		if d > 0 {
			last += (d - 1) * t.Stride[i]
		}
	}
	if count > 0 && last >= n {
		return nil, true, fmt.Errorf("%w: size %v, stride %v, offset %d reach element %d of a storage of %d", ErrFormat, t.Size, t.Stride, t.StorageOffset, last, n)
	}
	if err := tr.Take(int64(count)*4, fmt.Sprintf("a tensor of size %v", t.Size)); err != nil {
		return nil, true, err
	}
	out := make([]float32, count)
	idx := make([]int, len(t.Size))
	for k := range out {
		off := t.StorageOffset
		for i, v := range idx {
			off += v * t.Stride[i]
		}
		out[k] = get(off)
		for i := len(idx) - 1; i >= 0; i-- { // advance the row-major counter
			idx[i]++
			if idx[i] < t.Size[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, true, nil
}
