package cuda

import (
	"fmt"
	"math"
	"strings"

	"holdgo/kernels"
)

// Launch configuration shared with the kernels (kernels/common.cuh).
const (
	blockSize = 256     // HG_BLOCK: threads per block of every 1-D kernel
	maxGrid   = 1 << 14 // grid-stride kernels never need more blocks than this
	maxRank   = 6       // HG_MAX_RANK of the strided kernels
	gemmTile  = 64      // hg_sgemm output tile (HG_GEMM_BM = HG_GEMM_BN)
)

// Reduction kinds of reduce.cu.
const (
	reduceSum = 0
	reduceMax = 1
)

// args packs kernel parameters the way cuLaunchKernel takes them: one 8-byte slot per parameter,
// the value in its low bytes (little-endian), in declaration order. Values that do not fit the
// parameter's C type are recorded as an error, reported by launch, so call sites stay one line.
type args struct {
	slots []uint64
	err   error
}

func (a *args) ptr(p uintptr) *args { a.slots = append(a.slots, uint64(p)); return a }

// ptr64 appends the address of float64 data (a C double*), which must be 8-byte aligned: a
// misaligned double load faults on a GPU (misaligned address) and is silently fine on the host
// shim, so the layouts that put doubles after floats (train's staged batch, the step statistics) are
// checked here rather than trusted.
func (a *args) ptr64(p uintptr) *args {
	if p%8 != 0 && a.err == nil {
		a.err = fmt.Errorf("kernel argument %d: double* at %#x is not 8-byte aligned", len(a.slots), p)
	}
	return a.ptr(p)
}

// i32 appends a C int.
func (a *args) i32(v int) *args {
	if v < math.MinInt32 || v > math.MaxInt32 {
		if a.err == nil {
			a.err = fmt.Errorf("kernel argument %d = %d does not fit a 32-bit int", len(a.slots), v)
		}
	}
	a.slots = append(a.slots, uint64(uint32(int32(v))))
	return a
}

// i64 appends a C long long.
func (a *args) i64(v int) *args { a.slots = append(a.slots, uint64(int64(v))); return a }

func (a *args) f32(v float32) *args {
	a.slots = append(a.slots, uint64(math.Float32bits(v)))
	return a
}

func (a *args) f64(v float64) *args {
	a.slots = append(a.slots, math.Float64bits(v))
	return a
}

// boolInt is the C int of a flag: 1 for true.
func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// ints appends up to maxRank C ints, padding with pad.
func (a *args) ints(v []int, pad int) *args {
	for i := range maxRank {
		if i < len(v) {
			a.i32(v[i])
		} else {
			a.i32(pad)
		}
	}
	return a
}

// grid1D is the grid of a grid-stride kernel over n elements.
func grid1D(n int) [3]int {
	return [3]int{max(1, min((n+blockSize-1)/blockSize, maxGrid)), 1, 1}
}

// gridRows is the grid of a block-per-row kernel.
func gridRows(rows int) [3]int { return [3]int{max(1, min(rows, maxGrid)), 1, 1} }

var block1D = [3]int{blockSize, 1, 1}

// launch runs kernel name with the packed arguments on the device's backend.
func (d *Device) launch(name string, grid [3]int, a *args) error {
	return d.launchShared(name, grid, 0, a)
}

// maxDynamicShared is the most dynamic shared memory a launch may ask for: what a block gets
// without opting in (48 KiB) less room for the kernels' static shared arrays.
const maxDynamicShared = 40 << 10

// optInShared reports whether kernel name may be launched with bytes of dynamic shared memory,
// asking the backend once per kernel (Backend.OptInShared) where bytes is above maxDynamicShared;
// the first refusal is kept in optInErr.
func (d *Device) optInShared(name string, bytes int) bool {
	if bytes <= maxDynamicShared || d.optIn[name] >= bytes {
		return true
	}
	if _, asked := d.optIn[name]; asked {
		return false
	}
	if err := d.be.OptInShared(name, bytes); err != nil {
		d.optIn[name] = -1
		if d.optInErr == nil {
			d.optInErr = fmt.Errorf("cuda: %s: %w", name, err)
		}
		return false
	}
	d.optIn[name] = bytes
	return true
}

// OptInErr is the first refusal of a kernel's opt-in to more shared memory (the implicit
// convolutions then use their 64 tile where they would have used the 128 one), or nil.
func (d *Device) OptInErr() error { return d.optInErr }

// launchShared is launch with shared bytes of dynamic shared memory (a kernel declared with
// HG_KERNEL_SHARED).
func (d *Device) launchShared(name string, grid [3]int, shared int, a *args) error {
	if a.err != nil {
		return fmt.Errorf("cuda: %s: %w", name, a.err)
	}
	if shared < 0 || shared > maxDynamicShared && d.optIn[name] < shared {
		return fmt.Errorf("cuda: %s: %d bytes of dynamic shared memory (at most %d without opting in, %d opted in)", name, shared,
			maxDynamicShared, max(d.optIn[name], 0))
	}
	if err := d.be.Launch(name, grid, block1D, shared, a.slots); err != nil {
		return fmt.Errorf("cuda: launch %s: %w", name, err)
	}
	return nil
}

// checkKernelParams checks the kernels of PTX modules (by family) against the launchers of
// launch_gen.go, which are generated from the kernels' C declarations: every kernel has a
// launcher, every launcher a kernel, and their parameter types agree. A PTX left stale after a
// kernel's parameters changed thus fails when the device loads it, not when the launch runs.
func checkKernelParams(mods map[string]string) error {
	seen := map[string]bool{}
	for fam, ptx := range mods {
		for name, params := range kernels.Params(ptx) {
			want, ok := kernelParams[name]
			if !ok {
				return fmt.Errorf("cuda: %s.ptx: kernel %s has no launcher (go generate ./tensor)", fam, name)
			}
			if got := strings.Join(params, " "); got != want {
				return fmt.Errorf("cuda: %s.ptx: kernel %s takes (%s), its launcher packs (%s): the PTX is stale (make ptx)", fam, name, got, want)
			}
			seen[name] = true
		}
	}
	for name := range kernelParams {
		if !seen[name] {
			return fmt.Errorf("cuda: kernel %s has a launcher but is in no PTX module (make ptx)", name)
		}
	}
	return nil
}
