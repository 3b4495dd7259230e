//go:build cudashim

package cuda

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"holdgo/cuda/internal/shim"
	"holdgo/tensor"
)

// The hazards a GPU exposes and the shim alone would not: each guard is exercised here on the shim.

// hg_sgemm splits the rows over several launches where ⌈M/64⌉ exceeds gridDim.y's limit: with the
// limit lowered to one tile every product taller than 64 rows is split, and the MatMul cases of the
// backend table (plain, transposed, batched, broadcast, β) must still match the reference.
func TestShimSgemmRowSplit(t *testing.T) {
	defer func(v int) { maxGridY = v }(maxGridY)
	maxGridY = 1
	be := &shim.Backend{}
	s := &suite{t: t, dev: NewDevice(be), rng: newSuiteRNG()}
	s.table(t, tensor.OpMatMul)
	if before := be.Launches["hg_sgemm"]; before == 0 {
		t.Fatal("no hg_sgemm launch")
	}
	// 129 rows at one tile per launch: three launches for one product.
	before := be.Launches["hg_sgemm"]
	s.compare("MatMul 129 rows", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
		return tensor.MatMul(nil, in[0], in[1], false, false)
	}, s.randn(129, 7), s.randn(7, 5))
	if got := be.Launches["hg_sgemm"] - before; got != 3 {
		t.Errorf("M = 129 with one 64-row tile per launch: %d launches, want 3", got)
	}
}

// A strided copy whose source and destination overlap is refused (hg_strided_copy reads the source
// through the non-coherent path); disjoint neighbours are fine.
func TestShimStridedCopyOverlap(t *testing.T) {
	d := NewDevice(&shim.Backend{})
	buf, err := d.scratch(4 * 64)
	if err != nil {
		t.Fatal(err)
	}
	defer d.release(buf)
	shape, st := []int{4, 8}, []int{8, 1}
	for _, accumulate := range []bool{false, true} {
		err := d.stridedCopy(shape, st, st, buf.ptr, at(buf.ptr, 16), accumulate)
		if !errors.Is(err, tensor.ErrUnsupported) {
			t.Errorf("accumulate=%v: overlapping copy gave %v", accumulate, err)
		}
		if err := d.stridedCopy(shape, st, st, buf.ptr, at(buf.ptr, 32), accumulate); err != nil {
			t.Errorf("accumulate=%v: disjoint copy: %v", accumulate, err)
		}
	}
}

// hg_unary in place (x == y), as conv2dGradWeight calls it for dw = β·dw.
func TestShimUnaryInPlace(t *testing.T) {
	d := NewDevice(&shim.Backend{})
	x := []float32{1, -2, 3, 0.5, 7}
	buf, err := upload(d, x)
	if err != nil {
		t.Fatal(err)
	}
	defer d.release(buf)
	if err := d.hgUnary(grid1D(len(x)), len(x), unaryCodes[tensor.OpMulScalar], 0.5, buf.ptr, buf.ptr); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(x))
	if err := d.be.CopyDtoH(unsafe.Pointer(&got[0]), buf.ptr, 4*len(got)); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if got[i] != 0.5*x[i] {
			t.Fatalf("in place 0.5·x = %v, want half of %v", got, x)
		}
	}
}

// A misaligned double* is refused before the launch (a GPU would fault with a misaligned address;
// the shim would not notice).
func TestShimMisalignedDouble(t *testing.T) {
	d := NewDevice(&shim.Backend{})
	buf, err := d.scratch(4 * 64)
	if err != nil {
		t.Fatal(err)
	}
	defer d.release(buf)
	err = d.hgFinish(gridRows(1), 1, at(buf.ptr, 1), 1, at(buf.ptr, 8), 0)
	if err == nil || !strings.Contains(err.Error(), "hg_finish") || !strings.Contains(err.Error(), "not 8-byte aligned") {
		t.Errorf("misaligned double*: %v", err)
	}
}
