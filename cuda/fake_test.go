package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"holdgo/tensor"
)

// fakeBackend is a stand-in GPU for the host-side glue: memory is Go byte slices at fake
// addresses, launches are recorded (name, configuration, argument slots) and not run, and the
// allocator can be given a budget to exercise the pool's out-of-memory path.
type fakeBackend struct {
	mem      map[uintptr][]byte
	next     uintptr
	budget   int // bytes the allocator may hand out (0: unlimited)
	used     int
	launches []fakeLaunch
	gemms    []Gemm
}

type fakeLaunch struct {
	name        string
	grid, block [3]int
	args        []uint64
}

func newFake() *fakeBackend { return &fakeBackend{mem: map[uintptr][]byte{}, next: 1 << 20} }

func (f *fakeBackend) Name() string { return "fake" }

func (f *fakeBackend) Alloc(bytes int) (uintptr, error) {
	if f.budget > 0 && f.used+bytes > f.budget {
		return 0, errors.New("fake out of memory")
	}
	p := f.next
	f.next += uintptr(bytes + 4096)
	f.mem[p] = make([]byte, bytes)
	f.used += bytes
	return p, nil
}

func (f *fakeBackend) Free(p uintptr) error {
	f.used -= len(f.mem[p])
	delete(f.mem, p)
	return nil
}

// at returns the bytes at device address p (inside some allocation).
func (f *fakeBackend) at(p uintptr, n int) []byte {
	for base, b := range f.mem {
		if p >= base && p+uintptr(n) <= base+uintptr(len(b)) {
			return b[p-base : int(p-base)+n]
		}
	}
	panic("fake: bad device address")
}

func (f *fakeBackend) Zero(p uintptr, n int) error { clear(f.at(p, n)); return nil }
func (f *fakeBackend) CopyHtoD(dst uintptr, src unsafe.Pointer, n int) error {
	copy(f.at(dst, n), unsafe.Slice((*byte)(src), n))
	return nil
}
func (f *fakeBackend) CopyDtoH(dst unsafe.Pointer, src uintptr, n int) error {
	copy(unsafe.Slice((*byte)(dst), n), f.at(src, n))
	return nil
}
func (f *fakeBackend) CopyDtoD(dst, src uintptr, n int) error {
	copy(f.at(dst, n), f.at(src, n))
	return nil
}
func (f *fakeBackend) Launch(name string, grid, block [3]int, _ int, args []uint64) error {
	f.launches = append(f.launches, fakeLaunch{name, grid, block, slices.Clone(args)})
	return nil
}
func (f *fakeBackend) Sync() error { return nil }
func (f *fakeBackend) OptInShared(name string, bytes int) error {
	return fmt.Errorf("fake: no opt-in to %d bytes of shared memory", bytes)
}

// fakeGemmer adds a recording cuBLAS.
type fakeGemmer struct{ *fakeBackend }

func (f fakeGemmer) Sgemm(g Gemm) error { f.gemms = append(f.gemms, g); return nil }

func TestArgsPacking(t *testing.T) {
	a := new(args).i32(-3).f32(1.5).f64(-2.25).i64(1<<40).ptr(0xdeadbeef).i32(boolInt(true)).ints([]int{7, 8}, 1)
	want := []uint64{uint64(uint32(0xfffffffd)), uint64(math.Float32bits(1.5)), math.Float64bits(-2.25), 1 << 40, 0xdeadbeef, 1,
		7, 8, 1, 1, 1, 1}
	if !slices.Equal(a.slots, want) || a.err != nil {
		t.Fatalf("slots %x (err %v), want %x", a.slots, a.err, want)
	}
	// The low 4 bytes of an int slot are the C int, as cuLaunchKernel reads it.
	if v := *(*int32)(unsafe.Pointer(&a.slots[0])); v != -3 {
		t.Errorf("int slot reads back as %d", v)
	}
	dev := NewDevice(newFake())
	if err := dev.launch("hg_fill", grid1D(1), new(args).i32(1<<31)); err == nil || !strings.Contains(err.Error(), "32-bit") {
		t.Errorf("out-of-range argument not reported: %v", err)
	}
}

func TestLaunchConfig(t *testing.T) {
	for _, c := range []struct{ n, blocks int }{{1, 1}, {256, 1}, {257, 2}, {1 << 30, maxGrid}} {
		if g := grid1D(c.n); g != [3]int{c.blocks, 1, 1} {
			t.Errorf("grid1D(%d) = %v, want %d blocks", c.n, g, c.blocks)
		}
	}
	fake := newFake()
	dev := NewDevice(fake)
	a, _ := tensor.RandN(tensor.NewRNG(1), 3, 1, 5).ToDevice(dev)
	b, _ := tensor.RandN(tensor.NewRNG(2), 4, 5).ToDevice(dev)
	fake.launches = nil
	tensor.Add(nil, a, b) // fill of the new output is a Zero, not a launch
	if len(fake.launches) != 1 {
		t.Fatalf("launches %v", fake.launches)
	}
	l := fake.launches[0]
	// (3,1,5)+(4,5): out (3,4,5); a strides (5,0,1), b strides (0,5,1); nothing merges.
	dims, sa, sb := l.args[2:8], l.args[8:14], l.args[14:20]
	if l.name != "hg_binary_bcast" || l.args[0] != 60 || l.block != block1D ||
		!slices.Equal(dims, []uint64{1, 1, 1, 3, 4, 5}) || !slices.Equal(sa, []uint64{0, 0, 0, 5, 0, 1}) ||
		!slices.Equal(sb, []uint64{0, 0, 0, 0, 5, 1}) {
		t.Errorf("broadcast launch %+v", l)
	}
	// Merging: a transpose-free permute of a contiguous tensor is one dimension.
	fake.launches = nil
	tensor.Permute(nil, b, 0, 1)
	if got := fake.launches[0].args[2:8]; !slices.Equal(got, []uint64{1, 1, 1, 1, 1, 20}) {
		t.Errorf("identity permute dims %v, want one merged dimension", got)
	}
	// Rank 8 with nothing to merge: one launch per index of the two leading dimensions.
	shape := []int{2, 3, 2, 3, 2, 3, 2, 3}
	x, _ := tensor.Zeros(shape...).ToDevice(dev)
	fake.launches = nil
	tensor.Permute(nil, x, 7, 6, 5, 4, 3, 2, 1, 0)
	if len(fake.launches) != 6 {
		t.Errorf("rank-8 permute: %d launches, want 6", len(fake.launches))
	}
	// Empty tensors launch nothing.
	fake.launches = nil
	e, _ := tensor.Zeros(0, 7).ToDevice(dev)
	tensor.Exp(nil, e)
	tensor.Sum(nil, e, 1)
	tensor.MatMul(nil, e, e, false, true)
	if len(fake.launches) != 0 {
		t.Errorf("empty tensors launched %v", fake.launches)
	}
}

// The transpose trick: the column-major GEMM that cuBLAS receives computes the row-major product.
func TestColumnMajorGemm(t *testing.T) {
	rng := tensor.NewRNG(3)
	const m, n, k = 5, 7, 3
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			a, b := tensor.RandN(rng, m*k).Data(), tensor.RandN(rng, k*n).Data()
			lda, ldb := k, n
			if ta {
				lda = m
			}
			if tb {
				ldb = k
			}
			want := make([]float32, m*n)
			rowMajorGemm(ta, tb, m, n, k, a, lda, b, ldb, want, n)
			g := Gemm{TransA: ta, TransB: tb, M: m, N: n, K: k, Lda: lda, Ldb: ldb, Ldc: n}.ColumnMajor()
			got := make([]float32, m*n)
			colMajorGemm(g.TransA, g.TransB, g.M, g.N, g.K, b, g.Lda, a, g.Ldb, got, g.Ldc) // A and B swapped
			if e := nmse(got, want); !(e <= 1e-12) {
				t.Errorf("ta=%v tb=%v: nmse %g", ta, tb, e)
			}
		}
	}
	// MatMul hands the row-major description to the backend's GEMM.
	fake := newFake()
	dev := NewDevice(fakeGemmer{fake})
	a, _ := tensor.Zeros(2, 4, 3).ToDevice(dev)
	b, _ := tensor.Zeros(5, 3).ToDevice(dev)
	tensor.MatMul(nil, a, b, false, true)
	if len(fake.gemms) != 1 {
		t.Fatalf("gemms %v", fake.gemms)
	}
	g := fake.gemms[0]
	if g.M != 4 || g.N != 5 || g.K != 3 || !g.TransB || g.Lda != 3 || g.Ldb != 3 || g.Ldc != 5 ||
		g.StrideA != 12 || g.StrideB != 0 || g.StrideC != 20 || g.Batch != 2 {
		t.Errorf("gemm %+v", g)
	}
	// TF32 tensor-core math by default, strict FP32 on request.
	dev.StrictFP32 = true
	tensor.MatMul(nil, a, b, false, true)
	if !fake.gemms[0].TF32 || fake.gemms[1].TF32 {
		t.Errorf("TF32 flags %v, %v: want on by default, off with StrictFP32", fake.gemms[0].TF32, fake.gemms[1].TF32)
	}
}

func rowMajorGemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				ia, ib := i*lda+p, p*ldb+j
				if ta {
					ia = p*lda + i
				}
				if tb {
					ib = j*ldb + p
				}
				av, bv := a[ia], b[ib]
				s += float64(av) * float64(bv)
			}
			c[i*ldc+j] = float32(s)
		}
	}
}

// colMajorGemm is BLAS's column-major sgemm (alpha 1, beta 0).
func colMajorGemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				ia, ib := i+p*lda, p+j*ldb
				if ta {
					ia = p + i*lda
				}
				if tb {
					ib = j + p*ldb
				}
				av, bv := a[ia], b[ib]
				s += float64(av) * float64(bv)
			}
			c[i+j*ldc] = float32(s)
		}
	}
}

func TestPoolReuse(t *testing.T) {
	fake := newFake()
	dev := NewDevice(fake)
	x, _ := tensor.RandN(tensor.NewRNG(1), 1000).ToDevice(dev)
	for range 50 { // scratch (the index list) comes back to the pool after every op
		tensor.Gather(nil, x, []int{3, 1, 2})
	}
	// Output tensors return to the pool when collected.
	deadline := time.Now().Add(5 * time.Second)
	for dev.PoolStats().InUseBytes > sizeClass(4000) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	allocs := dev.PoolStats().DriverAllocs
	for range 50 {
		tensor.Gather(nil, x, []int{3, 1, 2})
		runtime.GC()
	}
	runtime.GC()
	st := dev.PoolStats()
	if st.DriverAllocs > allocs+2 || st.Hits < 50 {
		t.Errorf("pool does not recycle: %+v (driver allocations before: %d)", st, allocs)
	}
	// New memory and recycled memory read as zeros.
	y := tensor.New(dev, 1000)
	h, _ := y.ToHost()
	if slices.ContainsFunc(h.Data(), func(v float32) bool { return v != 0 }) {
		t.Error("allocation not zeroed")
	}
	if sizeClass(1) != 256 || sizeClass(257) != 512 || sizeClass(5<<20) != 8<<20 {
		t.Errorf("size classes %d %d %d", sizeClass(1), sizeClass(257), sizeClass(5<<20))
	}
}

func TestPoolOutOfMemory(t *testing.T) {
	fake := newFake()
	fake.budget = 5 << 20
	dev := NewDevice(fake)
	func() { // 2 MiB cached in the pool after this
		a := tensor.New(dev, 1<<19)
		_ = a
	}()
	deadline := time.Now().Add(5 * time.Second)
	for dev.PoolStats().CachedBytes == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// 1.5 MiB (class 2 MiB) comes from the cache.
	small, err := dev.Alloc(3 << 17)
	if err != nil || dev.PoolStats().DriverAllocs != 1 {
		t.Fatalf("cached block not reused: %v, %+v", err, dev.PoolStats())
	}
	runtime.KeepAlive(small)
	small = nil
	for dev.PoolStats().CachedBytes == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// 2.5 MiB (class 4 MiB) fits only once the pool frees its cached 2 MiB.
	big, err := dev.Alloc(5 << 17)
	if err != nil || dev.PoolStats().DriverFrees != 1 {
		t.Fatalf("pool did not trim its cache to make room: %v, %+v", err, dev.PoolStats())
	}
	// A second one does not fit at all: an honest out-of-memory error.
	_, err = dev.Alloc(5 << 17)
	if err == nil || !strings.Contains(err.Error(), "fake out of memory") {
		t.Errorf("want an out-of-memory error, got %v", err)
	}
	runtime.KeepAlive(big)
}

// A request with an empty list of its own reuses a cached block of a larger class up to twice its
// size, not one beyond.
func TestPoolReusesLargerClass(t *testing.T) {
	p := newPool(newFake())
	big, class, err := p.get(8 << 20)
	if err != nil || class != 8<<20 {
		t.Fatal(class, err)
	}
	p.put(big, class)
	ptr, c, err := p.get(3 << 20) // class 4 MiB: the free 8 MiB block is twice that
	if st := p.snapshot(); err != nil || ptr != big || c != 8<<20 || st.LargerHits != 1 || st.DriverAllocs != 1 {
		t.Fatalf("3 MiB not served by the free 8 MiB block: %v, class %d, %+v", err, c, st)
	}
	p.put(ptr, c)
	ptr, c, err = p.get(3 << 19) // class 2 MiB: 8 MiB is four times that
	if st := p.snapshot(); err != nil || ptr == big || c != 2<<20 || st.DriverAllocs != 2 {
		t.Errorf("1.5 MiB took the 8 MiB block or no new one: %v, class %d, %+v", err, c, st)
	}
}

// Out of driver memory, the pool collects garbage so that the buffers of unreachable tensors
// come back, instead of failing while they wait for a GC that no allocation on the Go heap
// would trigger.
func TestPoolCollectsBeforeFailing(t *testing.T) {
	fake := newFake()
	fake.budget = 5 << 20
	dev := NewDevice(fake)
	func() {
		a := tensor.New(dev, 1<<20) // 4 MiB, unreachable after this function
		_ = a
	}()
	b, err := dev.Alloc(1 << 20) // another 4 MiB: fits only once a's block is back
	if err != nil {
		t.Fatalf("allocation failed although an unreachable tensor held the memory: %v (%+v)", err, dev.PoolStats())
	}
	if st := dev.PoolStats(); st.Collections != 1 {
		t.Errorf("collections %d, want 1: %+v", st.Collections, st)
	}
	runtime.KeepAlive(b)
}

func TestForeignTensor(t *testing.T) {
	dev := NewDevice(newFake())
	other := NewDevice(newFake())
	a, _ := tensor.Zeros(3).ToDevice(dev)
	b, _ := tensor.Zeros(3).ToDevice(other)
	if err := dev.Exec(tensor.Op{Kind: tensor.OpAdd}, a, a, b); err == nil || !strings.Contains(err.Error(), "not on device") {
		t.Errorf("foreign operand accepted: %v", err)
	}
	if err := dev.Exec(tensor.Op{Kind: tensor.OpSoftmax, Scalar: 1}, a, b); err == nil {
		t.Error("Softmax accepted a foreign tensor")
	}
}

// Dropped device tensors cost the Go heap almost nothing, so without pacing nothing would collect
// them and the pool would keep asking the driver for more. With a goal of 8 MiB, 400 dropped
// 1 MiB tensors must leave the device footprint near twice the goal, not at 400 MiB.
func TestPoolPacesCollections(t *testing.T) {
	fake := newFake()
	dev := NewDevice(fake)
	dev.pool.floor, dev.pool.goal = 8<<20, 8<<20
	peak := 0
	for range 400 {
		a := tensor.New(dev, 1<<18) // 1 MiB, unreachable after this iteration
		_ = a
		peak = max(peak, fake.used)
	}
	st := dev.PoolStats()
	if peak > 24<<20 || st.Paced == 0 {
		t.Errorf("device footprint peaked at %d MiB with a goal of 8 MiB (paced collections %d): %+v", peak>>20, st.Paced, st)
	}
	// Live data above the floor raises the goal instead of collecting at every allocation.
	keep := make([]*tensor.Tensor, 0, 16)
	for range 16 {
		keep = append(keep, tensor.New(dev, 1<<18))
	}
	before := dev.PoolStats().Paced
	for range 100 {
		a := tensor.New(dev, 1<<18)
		_ = a
	}
	if n := dev.PoolStats().Paced - before; n > 20 {
		t.Errorf("%d paced collections for 100 allocations with 16 MiB live: the goal does not follow the live data", n)
	}
	runtime.KeepAlive(keep)
}
