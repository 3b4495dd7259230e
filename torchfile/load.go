package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"

	"holdgo/internal/budget"
)

// The loaders below replace gopickle's pytorch.Load, which allocates every
// storage at the size the pickle declares and reads it with short reads
// unchecked (a truncated file yields zeros). Here each pickle is scanned
// first (scanPickle), every storage's declared size is checked against the
// bytes that hold it and against the memory budget before it is allocated,
// and storages are read in full or not at all.

// maxDeflateRatio bounds how much a deflated zip entry may inflate: deflate
// cannot exceed about 1032:1, so an entry declaring more is a lie.
const maxDeflateRatio = 1100

// elemSize is the bytes per element of a storage class; float reports
// whether this package decodes it.
func elemSize(cls pytorch.StorageClassInterface) (size int, float bool, err error) {
	switch cls.(type) {
	case *pytorch.FloatStorageClass:
		return 4, true, nil
	case *pytorch.DoubleStorageClass:
		return 8, true, nil
	case *pytorch.HalfStorageClass:
		return 2, true, nil
	case *pytorch.BFloat16StorageClass:
		return 2, true, nil
	case *pytorch.LongStorageClass:
		return 8, false, nil
	case *pytorch.IntStorageClass:
		return 4, false, nil
	case *pytorch.ShortStorageClass:
		return 2, false, nil
	case *pytorch.CharStorageClass, *pytorch.ByteStorageClass, *pytorch.BoolStorageClass:
		return 1, false, nil
	}
	return 0, false, fmt.Errorf("%w: unknown storage class %T", ErrFormat, cls)
}

// fill decodes raw (exactly size elements) into a float storage.
func fill(st pytorch.StorageInterface, raw []byte, size int) {
	switch s := st.(type) {
	case *pytorch.FloatStorage:
		s.Data = make([]float32, size)
		for i := range s.Data {
			s.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case *pytorch.DoubleStorage:
		s.Data = make([]float64, size)
		for i := range s.Data {
			s.Data[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case *pytorch.HalfStorage:
		s.Data = make([]float32, size)
		for i := range s.Data {
			s.Data[i] = math.Float32frombits(pytorch.FloatBits16to32(binary.LittleEndian.Uint16(raw[2*i:])))
		}
	case *pytorch.BFloat16Storage:
		s.Data = make([]float32, size)
		for i := range s.Data {
			s.Data[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	}
}

// thnnBackend stands for a historical class some legacy pickles name.
type thnnBackend struct{}

func (thnnBackend) Call(...any) (any, error) { return nil, nil }

// findClass resolves the classes a state dict's pickle names (as gopickle's
// pytorch loader does).
func findClass(module, name string) (any, error) {
	switch module + "." + name {
	case "torch._utils._rebuild_tensor_v2":
		return &pytorch.RebuildTensorV2{}, nil
	case "torch.FloatStorage":
		return &pytorch.FloatStorageClass{}, nil
	case "torch.HalfStorage":
		return &pytorch.HalfStorageClass{}, nil
	case "torch.DoubleStorage":
		return &pytorch.DoubleStorageClass{}, nil
	case "torch.CharStorage":
		return &pytorch.CharStorageClass{}, nil
	case "torch.ShortStorage":
		return &pytorch.ShortStorageClass{}, nil
	case "torch.IntStorage":
		return &pytorch.IntStorageClass{}, nil
	case "torch.LongStorage":
		return &pytorch.LongStorageClass{}, nil
	case "torch.ByteStorage":
		return &pytorch.ByteStorageClass{}, nil
	case "torch.BoolStorage":
		return &pytorch.BoolStorageClass{}, nil
	case "torch.BFloat16Storage":
		return &pytorch.BFloat16StorageClass{}, nil
	case "torch.nn.backends.thnn._get_thnn_function_backend":
		return thnnBackend{}, nil
	}
	return types.NewGenericClass(module, name), nil
}

// unpickle scans then unpickles the pickle at the start of b, returning the
// object and the pickle's length.
func unpickle(b []byte, persistent func(any) (any, error)) (any, int, error) {
	n, err := scanPickle(b)
	if err != nil {
		return nil, 0, err
	}
	u := pickle.NewUnpickler(bytes.NewReader(b[:n]))
	u.FindClass = findClass
	u.PersistentLoad = persistent
	obj, err := u.Load()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return obj, n, nil
}

// storageID is the persistent id of a storage: (typename, class, key, location, size[, view]).
type storageID struct {
	cls  pytorch.StorageClassInterface
	key  string
	loc  string
	size int
	view any
}

func parseStorageID(id any, legacy bool) (storageID, error) {
	t, ok := id.(*types.Tuple)
	if !ok || t.Len() < 5 {
		return storageID{}, fmt.Errorf("%w: persistent id %v is not a storage tuple", ErrFormat, id)
	}
	if name, _ := t.Get(0).(string); name != "storage" {
		return storageID{}, fmt.Errorf("%w: persistent id of type %v, want storage", ErrFormat, t.Get(0))
	}
	var s storageID
	var ok1, ok2, ok3, ok4 bool
	s.cls, ok1 = t.Get(1).(pytorch.StorageClassInterface)
	s.key, ok2 = t.Get(2).(string)
	s.loc, ok3 = t.Get(3).(string)
	s.size, ok4 = t.Get(4).(int)
	if !ok1 || !ok2 || !ok3 || !ok4 || s.size < 0 {
		return storageID{}, fmt.Errorf("%w: malformed storage tuple %v", ErrFormat, id)
	}
	if legacy && t.Len() > 5 {
		s.view = t.Get(5)
	}
	return s, nil
}

// loadZip reads the zip form (torch.save of PyTorch ≥ 1.6).
func loadZip(path string, size int64, tr *budget.Tracker) (any, error) {
	r, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	defer r.Close()
	records := map[string]*zip.File{}
	for _, f := range r.File {
		_, name := path_Split(f.Name)
		if f.UncompressedSize64 > uint64(budget.Limit()) ||
			(f.Method != zip.Store && f.UncompressedSize64/maxDeflateRatio > f.CompressedSize64) ||
			(f.Method == zip.Store && f.UncompressedSize64 > uint64(size)) {
			return nil, fmt.Errorf("%w: entry %s declares %d bytes from %d compressed (a file of %d bytes)", ErrFormat, f.Name, f.UncompressedSize64, f.CompressedSize64, size)
		}
		records[name] = f
	}
	if _, ok := records["constants.pkl"]; ok {
		return nil, fmt.Errorf("%w: a TorchScript archive, not a state dict", ErrFormat)
	}
	pkl, ok := records["data.pkl"]
	if !ok {
		return nil, fmt.Errorf("%w: no data.pkl in the archive", ErrFormat)
	}
	raw, err := readEntry(pkl, tr)
	if err != nil {
		return nil, err
	}
	loaded := map[string]pytorch.StorageInterface{}
	obj, _, err := unpickle(raw, func(id any) (any, error) {
		s, err := parseStorageID(id, false)
		if err != nil {
			return nil, err
		}
		if st, ok := loaded[s.key]; ok {
			return st, nil
		}
		rec, ok := records[s.key]
		if !ok {
			return nil, fmt.Errorf("%w: no record %q for a storage", ErrFormat, s.key)
		}
		es, isFloat, err := elemSize(s.cls)
		if err != nil {
			return nil, err
		}
		if uint64(s.size) > rec.UncompressedSize64/uint64(es) {
			return nil, fmt.Errorf("%w: storage %s declares %d elements of %d bytes, its record holds %d bytes", ErrFormat, s.key, s.size, es, rec.UncompressedSize64)
		}
		st := s.cls.New(s.size, s.loc)
		if isFloat {
			data, err := readEntry(rec, tr)
			if err != nil {
				return nil, err
			}
			if err := tr.Take(int64(s.size)*4, "storage "+s.key); err != nil {
				return nil, err
			}
			fill(st, data, s.size)
		}
		loaded[s.key] = st
		return st, nil
	})
	return obj, err
}

func path_Split(p string) (string, string) { return path.Split(p) }

// readEntry inflates a zip entry, taking its declared size from the budget
// and failing if it inflates to more or less than it declared.
func readEntry(f *zip.File, tr *budget.Tracker) ([]byte, error) {
	n := int64(f.UncompressedSize64)
	if err := tr.Take(n, "entry "+f.Name); err != nil {
		return nil, err
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: entry %s: %v", ErrFormat, f.Name, err)
	}
	defer rc.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(budget.LimitReader(rc, n, "entry "+f.Name), buf); err != nil {
		return nil, fmt.Errorf("%w: entry %s: %v", ErrFormat, f.Name, err)
	}
	return buf, nil
}

// loadLegacy reads the legacy form: pickles of the magic number, the
// protocol, system information, the object and the storage keys, then each
// storage as an 8-byte element count and its data.
func loadLegacy(path string, tr *budget.Tracker) (any, error) {
	b, err := budget.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := tr.Take(int64(len(b)), "the file"); err != nil {
		return nil, err
	}
	pos := 0
	for range 3 { // magic, protocol, system information
		_, n, err := unpickle(b[pos:], nil)
		if err != nil {
			return nil, err
		}
		pos += n
	}
	storages := map[string]pytorch.StorageInterface{}
	ids := map[string]storageID{}
	obj, n, err := unpickle(b[pos:], func(id any) (any, error) {
		if t, ok := id.(*types.Tuple); ok && t.Len() >= 2 {
			if name, _ := t.Get(0).(string); name == "module" {
				return t.Get(1), nil
			}
		}
		s, err := parseStorageID(id, true)
		if err != nil {
			return nil, err
		}
		if s.view != nil {
			return nil, fmt.Errorf("%w: storage views (legacy view metadata) are not supported", ErrFormat)
		}
		if prev, ok := ids[s.key]; ok {
			if prev.size != s.size {
				return nil, fmt.Errorf("%w: storage %s declared with %d and %d elements", ErrFormat, s.key, prev.size, s.size)
			}
			return storages[s.key], nil
		}
		if _, _, err := elemSize(s.cls); err != nil {
			return nil, err
		}
		ids[s.key] = s
		storages[s.key] = s.cls.New(s.size, s.loc)
		return storages[s.key], nil
	})
	if err != nil {
		return nil, err
	}
	pos += n
	keysObj, n, err := unpickle(b[pos:], nil)
	if err != nil {
		return nil, err
	}
	pos += n
	keys, ok := keysObj.(*types.List)
	if !ok {
		return nil, fmt.Errorf("%w: the storage keys are a %T, want a list", ErrFormat, keysObj)
	}
	for i := range keys.Len() {
		key, ok := keys.Get(i).(string)
		if !ok {
			return nil, fmt.Errorf("%w: storage key %v is not a string", ErrFormat, keys.Get(i))
		}
		s, ok := ids[key]
		if !ok {
			return nil, fmt.Errorf("%w: storage %q is listed but not used", ErrFormat, key)
		}
		if len(b)-pos < 8 {
			return nil, fmt.Errorf("%w: truncated before storage %s", ErrFormat, key)
		}
		count := binary.LittleEndian.Uint64(b[pos:])
		pos += 8
		es, isFloat, _ := elemSize(s.cls)
		if count != uint64(s.size) {
			return nil, fmt.Errorf("%w: storage %s holds %d elements, the pickle declared %d", ErrFormat, key, count, s.size)
		}
		if count > uint64(len(b)-pos)/uint64(es) {
			return nil, fmt.Errorf("%w: truncated: storage %s needs %d bytes, %d are left", ErrFormat, key, count*uint64(es), len(b)-pos)
		}
		if isFloat {
			if err := tr.Take(int64(count)*4, "storage "+key); err != nil {
				return nil, err
			}
			fill(storages[key], b[pos:pos+int(count)*es], int(count))
		}
		pos += int(count) * es
	}
	return obj, nil
}
