package checkpoint

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// awkward32 holds the float32 values whose bits are easiest to lose:
// NaNs with payloads (quiet and signalling, both signs), signed zeros,
// infinities, subnormals and the extremes of the normal range.
func awkward32() []float32 {
	bits := []uint32{
		0x7fc00000, 0xffc00000, 0x7fc12345, 0x7f800001, 0xff800abc, // NaNs
		0x00000000, 0x80000000, // +0, -0
		0x7f800000, 0xff800000, // +Inf, -Inf
		0x00000001, 0x807fffff, 0x00400000, // subnormals
		0x00800000, 0x7f7fffff, 0xff7fffff, // smallest normal, ±max
		0x3f800000, 0xbeaaaaab, // 1, -1/3
	}
	out := make([]float32, len(bits))
	for i, b := range bits {
		out[i] = math.Float32frombits(b)
	}
	return out
}

func awkward64() []float64 {
	bits := []uint64{
		0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0x7ff4000000abcdef, // NaNs
		0x0000000000000000, 0x8000000000000000, // ±0
		0x7ff0000000000000, 0xfff0000000000000, // ±Inf
		0x0000000000000001, 0x800fffffffffffff, // subnormals
		0x0010000000000000, 0x7fefffffffffffff, // smallest normal, max
		0x3fd5555555555555, // 1/3
	}
	out := make([]float64, len(bits))
	for i, b := range bits {
		out[i] = math.Float64frombits(b)
	}
	return out
}

func bits32(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

func bits64(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

// ramp returns n float32 values that differ in every byte position.
func ramp(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i)*1.25 - 7
	}
	return out
}

func TestRoundTripBitExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	a32 := awkward32()
	a64 := awkward64()
	tensors := []Tensor{
		{Name: "awkward", Shape: []int{len(a32)}, Data: a32},
		{Name: "w1", Shape: []int{3, 5, 7}, Data: ramp(105)},
		{Name: "scalar", Shape: nil, Data: []float32{-0.5}},
		{Name: "empty", Shape: []int{4, 0}, Data: nil},
		{Name: "coef64", Shape: []int{len(a64)}, Data64: a64},
		{Name: "odd", Shape: []int{3}, Data: []float32{1, 2, 3}}, // 12 bytes: F64 placed first keeps alignment
		{Name: "empty64", Shape: []int{0}, Data64: []float64{}},
	}
	meta := map[string]string{"framework": "holdgo", "note": "ünïcode \"quoted\" <tag> & \n"}
	if err := Save(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range tensors {
		info, err := f.Info(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if info.DType != want.DType() || !slices.Equal(info.Shape, want.Shape) {
			t.Errorf("%s: info %s%v, want %s%v", want.Name, info.DType, info.Shape, want.DType(), want.Shape)
		}
		if info.Begin%(info.DType.Bits()/8) != 0 {
			t.Errorf("%s: offset %d not aligned to its element size", want.Name, info.Begin)
		}
		if want.DType() == F64 {
			got, err := f.Float64(want.Name, want.Shape...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bits64(got), bits64(want.Data64)) {
				t.Errorf("%s: bits differ:\n got %x\nwant %x", want.Name, bits64(got), bits64(want.Data64))
			}
			continue
		}
		got, err := f.Float32(want.Name, want.Shape...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bits32(got), bits32(want.Data)) {
			t.Errorf("%s: bits differ:\n got %x\nwant %x", want.Name, bits32(got), bits32(want.Data))
		}
	}
	if !maps.Equal(f.Meta, meta) {
		t.Errorf("metadata = %q, want %q", f.Meta, meta)
	}
	// F64 tensors first, then the given order; zero-length tensors keep
	// their place.
	wantOrder := []string{"coef64", "empty64", "awkward", "w1", "scalar", "empty", "odd"}
	if got := f.Names(); !slices.Equal(got, wantOrder) {
		t.Errorf("Names() = %q, want %q", got, wantOrder)
	}
}

func TestSaveDeterministic(t *testing.T) {
	dir := t.TempDir()
	tensors := []Tensor{
		{Name: "b", Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}},
		{Name: "a", Shape: []int{1}, Data64: []float64{math.Pi}},
	}
	meta := map[string]string{"z": "1", "a": "2", "m": "3", KeyStep: "7"}
	var files [][]byte
	for _, name := range []string{"one", "two"} {
		path := filepath.Join(dir, name)
		if err := Save(path, tensors, meta); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two saves of the same tensors differ")
	}
	headerLen := int(files[0][0]) // small header
	if headerLen%8 != 0 {
		t.Errorf("header length %d not a multiple of 8", headerLen)
	}
	want := `{"__metadata__":{"a":"2","m":"3","step":"7","z":"1"},` +
		`"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},` +
		`"b":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}}`
	if got := string(bytes.TrimRight(files[0][8:8+headerLen], " ")); got != want {
		t.Errorf("header\n got %s\nwant %s", got, want)
	}
}

// TestReferenceBytes checks byte-for-byte agreement with files written by
// the reference implementation (huggingface/safetensors, the expected
// outputs of its Rust serializer tests), both ways.
func TestReferenceBytes(t *testing.T) {
	dir := t.TempDir()

	// serialize({"attn0": F32 [1,1,2,3] = 0..5}, None): header padded with 7 spaces.
	want := []byte{72, 0, 0, 0, 0, 0, 0, 0}
	want = append(want, `{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       `...)
	want = append(want, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64)
	path := filepath.Join(dir, "attn0")
	if err := Save(path, []Tensor{{Name: "attn0", Shape: []int{1, 1, 2, 3}, Data: []float32{0, 1, 2, 3, 4, 5}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("attn0 file\n got %q\nwant %q", got, want)
	}

	// serialize({}, {"framework": "pt"}).
	want = []byte{40, 0, 0, 0, 0, 0, 0, 0}
	want = append(want, `{"__metadata__":{"framework":"pt"}}     `...)
	path = filepath.Join(dir, "empty")
	if err := Save(path, nil, map[string]string{"framework": "pt"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("metadata-only file\n got %q\nwant %q", got, want)
	}

	// The reference's deserialization example: an I32 tensor, zero data.
	// It loads; reading it as a float is a dtype error.
	ref := []byte("<\x00\x00\x00\x00\x00\x00\x00{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	f, err := parse("ref", ref)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := f.Info("test"); info.DType != I32 || !slices.Equal(info.Shape, []int{2, 2}) {
		t.Errorf("info = %+v", info)
	}
	if _, err := f.Float32("test"); !errors.Is(err, ErrDType) {
		t.Errorf("Float32 on I32: err = %v, want ErrDType", err)
	}

	// Whitespace padding of any JSON kind is allowed after the object.
	if _, err := parse("ws", []byte("\x06\x00\x00\x00\x00\x00\x00\x00{}\r \t\n")); err != nil {
		t.Errorf("whitespace-padded header: %v", err)
	}
}

func TestIntoNoAlloc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m")
	w := ramp(1000)
	c := awkward64()
	if err := Save(path, []Tensor{{Name: "w", Shape: []int{10, 100}, Data: w}, {Name: "c", Shape: []int{len(c)}, Data64: c}}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 1000)
	dst64 := make([]float64, len(c))
	allocs := testing.AllocsPerRun(10, func() {
		if err := f.Into("w", dst, 10, 100); err != nil {
			t.Fatal(err)
		}
		if err := f.Into64("c", dst64); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Into allocates %v times per call", allocs)
	}
	if !slices.Equal(dst, w) || !slices.Equal(bits64(dst64), bits64(c)) {
		t.Error("Into copied the wrong values")
	}
}

func TestMetadataHelpers(t *testing.T) {
	type config struct {
		Hidden int       `json:"hidden"`
		Beta   []float64 `json:"beta"`
		SDE    string    `json:"sde"`
	}
	cfg := config{Hidden: 128, Beta: []float64{0.1, 20}, SDE: "vp"}
	meta := map[string]string{}
	SetStep(meta, 123456789012)
	if err := SetJSON(meta, KeyConfig, cfg); err != nil {
		t.Fatal(err)
	}
	if err := SetJSON(meta, "bad", math.NaN()); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetJSON(NaN) err = %v, want ErrInvalid", err)
	}
	delete(meta, "bad")
	path := filepath.Join(t.TempDir(), "m")
	if err := Save(path, nil, meta); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	step, err := f.Step()
	if err != nil || step != 123456789012 {
		t.Errorf("Step() = %d, %v", step, err)
	}
	var got config
	if err := f.GetJSON(KeyConfig, &got); err != nil {
		t.Fatal(err)
	}
	if got.Hidden != cfg.Hidden || got.SDE != cfg.SDE || !slices.Equal(got.Beta, cfg.Beta) {
		t.Errorf("config = %+v, want %+v", got, cfg)
	}
	if err := f.GetJSON("absent", &got); !errors.Is(err, ErrMissing) {
		t.Errorf("GetJSON(absent) err = %v, want ErrMissing", err)
	}
	f.Meta[KeyStep] = "12x"
	if _, err := f.Step(); !errors.Is(err, ErrCorruptHeader) {
		t.Errorf("Step() on %q: err = %v, want ErrCorruptHeader", "12x", err)
	}
	f.Meta[KeyConfig] = "{"
	if err := f.GetJSON(KeyConfig, &got); !errors.Is(err, ErrCorruptHeader) {
		t.Errorf("GetJSON on bad JSON: err = %v, want ErrCorruptHeader", err)
	}
}

func TestSaveRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		tensors []Tensor
		meta    map[string]string
		want    error
	}{
		{"empty name", []Tensor{{Name: "", Shape: []int{1}, Data: []float32{1}}}, nil, ErrInvalid},
		{"reserved name", []Tensor{{Name: "__metadata__", Shape: []int{1}, Data: []float32{1}}}, nil, ErrInvalid},
		{"duplicate", []Tensor{{Name: "a", Shape: []int{1}, Data: []float32{1}}, {Name: "a", Shape: []int{1}, Data: []float32{1}}}, nil, ErrInvalid},
		{"both data", []Tensor{{Name: "a", Shape: []int{1}, Data: []float32{1}, Data64: []float64{1}}}, nil, ErrInvalid},
		{"negative dim", []Tensor{{Name: "a", Shape: []int{-1}, Data: []float32{1}}}, nil, ErrInvalid},
		{"bad utf8 name", []Tensor{{Name: "a\xff", Shape: []int{1}, Data: []float32{1}}}, nil, ErrInvalid},
		{"bad utf8 meta", nil, map[string]string{"k": "\xfe"}, ErrInvalid},
		{"shape vs data", []Tensor{{Name: "a", Shape: []int{2, 3}, Data: make([]float32, 5)}}, nil, ErrShape},
		{"scalar vs data", []Tensor{{Name: "a", Data: make([]float32, 2)}}, nil, ErrShape},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, "x")
		err := Save(path, tc.tensors, tc.meta)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if _, statErr := os.Stat(path); statErr == nil {
			t.Errorf("%s: a file was written", tc.name)
		}
	}
}

// BenchmarkSave and BenchmarkLoad move a 64 MB float32 checkpoint; b.SetBytes
// makes them report MB/s (go test -bench . ./checkpoint/).
func BenchmarkSave(b *testing.B) {
	data := ramp(16 << 20)
	path := filepath.Join(b.TempDir(), "big")
	b.SetBytes(int64(4 * len(data)))
	for b.Loop() {
		if err := Save(path, []Tensor{{Name: "w", Shape: []int{len(data)}, Data: data}}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	data := ramp(16 << 20)
	path := filepath.Join(b.TempDir(), "big")
	if err := Save(path, []Tensor{{Name: "w", Shape: []int{len(data)}, Data: data}}, nil); err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, len(data))
	b.SetBytes(int64(4 * len(data)))
	for b.Loop() {
		f, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Into("w", dst); err != nil {
			b.Fatal(err)
		}
	}
}
