package cuda

import (
	"fmt"
	"math/bits"
	"slices"

	"holdgo/tensor"
)

// strides returns the row-major element strides of shape.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// bcastStrides returns the strides of an operand of shape `shape` read at the indices of `out`
// (right-aligned; 0 on broadcast dimensions).
func bcastStrides(shape []int, rank int) []int {
	s := make([]int, rank)
	own := strides(shape)
	lead := rank - len(shape)
	for i, d := range shape {
		if d != 1 {
			s[lead+i] = own[i]
		}
	}
	return s
}

// coalesce merges adjacent dimensions that every operand walks contiguously (stride[i] ==
// stride[i+1]·dim[i+1]) and drops size-1 dimensions.
func coalesce(shape []int, operands ...[]int) ([]int, [][]int) {
	var dims []int
	st := make([][]int, len(operands))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if k := len(dims) - 1; k >= 0 {
			merge := true
			for j, s := range operands {
				if st[j][k] != s[i]*d {
					merge = false
					break
				}
			}
			if merge {
				dims[k] *= d
				for j, s := range operands {
					st[j][k] = s[i]
				}
				continue
			}
		}
		dims = append(dims, d)
		for j, s := range operands {
			st[j] = append(st[j], s[i])
		}
	}
	return dims, st
}

// forStrided calls launch once per index of the dimensions beyond the kernels' maxRank (usually
// once): with the trailing maxRank dimensions and strides, padded at the front with size-1
// dimensions, the element offset of every operand, and the element count.
func forStrided(dims []int, st [][]int, launch func(n int, dims []int, st [][]int, offs []int) error) error {
	lead := max(len(dims)-maxRank, 0)
	inner, innerSt := dims[lead:], make([][]int, len(st))
	n := 1
	for _, v := range inner {
		n *= v
	}
	pad := maxRank - len(inner)
	innerDims := append(slices.Repeat([]int{1}, pad), inner...)
	for j := range st {
		innerSt[j] = append(make([]int, pad), st[j][lead:]...)
	}
	idx := make([]int, lead)
	offs := make([]int, len(st))
	for {
		for j := range offs {
			offs[j] = 0
			for k, c := range idx {
				offs[j] += c * st[j][k]
			}
		}
		if err := launch(n, innerDims, innerSt, offs); err != nil {
			return err
		}
		k := lead - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < dims[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return nil
		}
	}
}

func at(p uintptr, off int) uintptr { return p + uintptr(4*off) }

// fastDivisor is the magic pair of divisor d (1 ≤ d < 2³¹) for hg_fastdiv (kernels/common.cuh):
// (0, 0) for d = 1; otherwise, with l = ⌈log₂ d⌉, mul = ⌈2^(31+l) / d⌉ (below 2³², passed as the bits
// of a C int) and shr = l − 1, so that n / d = ⌊n·mul / 2³²⌋ >> shr for every 0 ≤ n < 2³¹.
func fastDivisor(d int) (mul, shr int) {
	if d <= 1 {
		return 0, 0
	}
	l := bits.Len(uint(d - 1))
	m := (uint64(1)<<(31+l) + uint64(d) - 1) / uint64(d)
	return int(int32(uint32(m))), l - 1
}

// fastDivisors is fastDivisor of each of a strided kernel's dims.
func fastDivisors(dims []int) (mul, shr [maxRank]int) {
	for k, d := range dims {
		mul[k], shr[k] = fastDivisor(d)
	}
	return
}

func (d *Device) binary(code int, out, a, b *tensor.Tensor, o, pa, pb uintptr) error {
	n := out.Len()
	if tensor.SameShape(a, b) && tensor.SameShape(a, out) {
		return d.hgBinary(grid1D(n), n, code, pa, pb, o)
	}
	r := out.Rank()
	dims, st := coalesce(out.Shape(), bcastStrides(a.Shape(), r), bcastStrides(b.Shape(), r), strides(out.Shape()))
	return forStrided(dims, st, func(n int, dims []int, st [][]int, offs []int) error {
		mul, shr := fastDivisors(dims)
		return d.hgBinaryBcast(grid1D(n), n, code, [maxRank]int(dims), [maxRank]int(st[0]), [maxRank]int(st[1]),
			at(pa, offs[0]), at(pb, offs[1]), at(o, offs[2]), mul, shr)
	})
}

// stridedCopy runs dst[off_d(i)] (+)= src[off_s(i)] over shape.
func (d *Device) stridedCopy(shape, srcStrides, dstStrides []int, src, dst uintptr, accumulate bool) error {
	n := 1
	for _, v := range shape {
		n *= v
	}
	if n == 0 {
		return nil
	}
	if lo, hi, ok := overlap(shape, srcStrides, dstStrides, src, dst); ok {
		return fmt.Errorf("cuda: strided copy: source [%#x, %#x) and destination [%#x, %#x) overlap: hg_strided_copy "+
			"reads its source through the non-coherent cache (const __restrict__), so an aliased copy would read stale values: %w",
			lo[0], hi[0], lo[1], hi[1], tensor.ErrUnsupported)
	}
	dims, st := coalesce(shape, srcStrides, dstStrides)
	return forStrided(dims, st, func(n int, dims []int, st [][]int, offs []int) error {
		mul, shr := fastDivisors(dims)
		return d.hgStridedCopy(grid1D(n), n, boolInt(accumulate), [maxRank]int(dims), [maxRank]int(st[0]), [maxRank]int(st[1]),
			at(src, offs[0]), at(dst, offs[1]), mul, shr)
	})
}

// overlap reports whether the byte ranges that a strided copy of shape reads (src with srcStrides)
// and writes (dst with dstStrides) intersect, and the two ranges [lo, hi).
func overlap(shape, srcStrides, dstStrides []int, src, dst uintptr) (lo, hi [2]uintptr, ok bool) {
	for k, base := range [2]uintptr{src, dst} {
		strides := [2][]int{srcStrides, dstStrides}[k]
		first, last := 0, 0 // element offsets of the lowest and highest element touched
		for i, n := range shape {
			if s := strides[i] * (n - 1); s < 0 {
				first += s
			} else {
				last += s
			}
		}
		lo[k], hi[k] = at(base, first), at(base, last+1)
	}
	return lo, hi, lo[0] < hi[1] && lo[1] < hi[0]
}

func (d *Device) permute(axes []int, out, a *tensor.Tensor, o, pa uintptr) error {
	in := strides(a.Shape())
	src := make([]int, len(axes))
	for i, ax := range axes {
		src[i] = in[(ax+len(axes))%len(axes)]
	}
	return d.stridedCopy(out.Shape(), src, strides(out.Shape()), pa, o, false)
}

func (d *Device) concat(axis int, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	os := strides(out.Shape())
	base := 0
	for i, t := range in {
		dst := o + uintptr(4*base*os[axis])
		if err := d.stridedCopy(t.Shape(), strides(t.Shape()), os, ip[i], dst, false); err != nil {
			return err
		}
		base += t.Shape()[axis]
	}
	return nil
}

// slice copies small = big[Lo:Hi along Axis], or with add, big[Lo:… along Axis] += small.
func (d *Device) slice(op tensor.Op, small, big *tensor.Tensor, ps, pb uintptr, add bool) error {
	bs := strides(big.Shape())
	window := pb + uintptr(4*op.Lo*bs[op.Axis])
	if add {
		return d.stridedCopy(small.Shape(), strides(small.Shape()), bs, ps, window, true)
	}
	return d.stridedCopy(small.Shape(), bs, strides(small.Shape()), window, ps, false)
}

// rows runs Gather (out[i] = in[Index[i]]) and ScatterAdd (out[Index[i]] += in[i]) along axis 0.
func (d *Device) rows(op tensor.Op, out, a *tensor.Tensor, o, pa uintptr) error {
	if len(op.Index) == 0 {
		return nil
	}
	many := a
	if op.Kind == tensor.OpScatterAdd {
		many = out
	}
	cols := 1
	for _, v := range many.Shape()[1:] {
		cols *= v
	}
	if cols == 0 {
		return nil
	}
	idx := make([]int32, len(op.Index))
	for i, v := range op.Index {
		idx[i] = int32(v)
	}
	s, err := upload(d, idx)
	if err != nil {
		return err
	}
	defer d.release(s)
	rows := len(op.Index)
	if op.Kind == tensor.OpGather {
		return d.hgGatherRows(grid1D(rows*cols), rows, cols, s.ptr, pa, o)
	}
	return d.hgScatterRows(grid1D(cols), rows, cols, s.ptr, pa, o)
}

// reduce reduces over axes (sorted, distinct). Adjacent reduced axes form one (outer, r, inner)
// pass; several groups run one after another through scratch memory.
func (d *Device) reduce(kind int, axes []int, shape []int, o, src uintptr) error {
	shape = slices.Clone(shape)
	if len(axes) == 0 {
		n := 1
		for _, v := range shape {
			n *= v
		}
		return d.be.CopyDtoD(o, src, 4*n)
	}
	// Groups of consecutive axes, last group first.
	var groups [][2]int
	for i := 0; i < len(axes); {
		j := i
		for j+1 < len(axes) && axes[j+1] == axes[j]+1 {
			j++
		}
		groups = append(groups, [2]int{axes[i], axes[j]})
		i = j + 1
	}
	var tmp []scratch
	defer func() {
		for _, s := range tmp {
			d.release(s)
		}
	}()
	for gi := len(groups) - 1; gi >= 0; gi-- {
		lo, hi := groups[gi][0], groups[gi][1]
		outer, r, inner := 1, 1, 1
		for i, v := range shape {
			switch {
			case i < lo:
				outer *= v
			case i > hi:
				inner *= v
			default:
				r *= v
			}
		}
		for i := lo; i <= hi; i++ {
			shape[i] = 1
		}
		dst := o
		if gi > 0 {
			s, err := d.scratch(4 * outer * inner)
			if err != nil {
				return err
			}
			tmp = append(tmp, s)
			dst = s.ptr
		}
		if outer*inner > 0 {
			var err error
			if inner == 1 {
				err = d.hgReduceRows(gridRows(outer), outer, r, kind, src, dst)
			} else {
				err = d.hgReduceCols(grid1D(outer*inner), outer, r, inner, kind, src, dst)
			}
			if err != nil {
				return err
			}
		}
		src = dst
	}
	return nil
}

// matMul runs out = op(a)·op(b) + Beta·out as one strided-batched GEMM (cuBLAS when the backend
// has it, else hg_sgemm).
func (d *Device) matMul(op tensor.Op, out, a, b *tensor.Tensor, o, pa, pb uintptr) error {
	r := out.Rank()
	m, n := out.Dim(r-2), out.Dim(r-1)
	batch := out.Len() / max(m*n, 1)
	if m*n == 0 {
		batch = 1
		for _, v := range out.Shape()[:r-2] {
			batch *= v
		}
	}
	dims := func(x *tensor.Tensor) (rows, cols, stride int) {
		s := x.Shape()
		rows, cols = s[len(s)-2], s[len(s)-1]
		if len(s) > 2 || batch == 1 {
			stride = rows * cols
		}
		return
	}
	ar, ac, as := dims(a)
	_, bc, bs := dims(b)
	k := ac
	if op.TransA {
		k = ar
	}
	g := Gemm{TransA: op.TransA, TransB: op.TransB, M: m, N: n, K: k, Alpha: 1, Beta: op.Beta,
		A: pa, B: pb, C: o, Lda: ac, Ldb: bc, Ldc: n, StrideA: as, StrideB: bs, StrideC: m * n, Batch: batch}
	return d.sgemm(g)
}

// sgemm runs g on cuBLAS if available, else on hg_sgemm.
func (d *Device) sgemm(g Gemm) error {
	if g.M == 0 || g.N == 0 || g.Batch == 0 {
		return nil
	}
	if d.gemm != nil {
		g.TF32, g.BF16 = !d.StrictFP32 && !d.BF16, !d.StrictFP32 && d.BF16
		if err := d.gemm.Sgemm(g); err != nil {
			return fmt.Errorf("cuda: cuBLAS sgemm: %w", err)
		}
		return nil
	}
	return d.kernelSgemm(g)
}

// CUDA's limits on gridDim.z and gridDim.y; maxGridY is a variable so that a test can lower it and
// exercise the row split of kernelSgemm at small sizes.
const maxGridZ = 65535

var maxGridY = 65535

// kernelSgemm runs g on the tiled hg_sgemm kernel: grid (⌈N/64⌉, ⌈M/64⌉, Batch). Where ⌈M/64⌉
// exceeds the gridDim.y limit the rows are split into launches of at most maxGridY tiles each
// (A and C offset by the first row), so a tall product does not fail to launch.
func (d *Device) kernelSgemm(g Gemm) error {
	if g.Batch > maxGridZ {
		return fmt.Errorf("batch %d > %d: %w", g.Batch, maxGridZ, tensor.ErrUnsupported)
	}
	rowsPer := maxGridY * gemmTile
	for m0 := 0; m0 < g.M || m0 == 0; m0 += rowsPer {
		c := g
		c.M = min(rowsPer, g.M-m0)
		if g.TransA { // A stored K×M: the chunk's rows are columns m0…
			c.A = at(g.A, m0)
		} else {
			c.A = at(g.A, m0*g.Lda)
		}
		c.C = at(g.C, m0*g.Ldc)
		grid := [3]int{(c.N + gemmTile - 1) / gemmTile, (c.M + gemmTile - 1) / gemmTile, c.Batch}
		if err := d.hgSgemm(grid, c.M, c.N, c.K, boolInt(c.TransA), boolInt(c.TransB), c.Alpha, c.A, c.Lda, c.StrideA, c.B, c.Ldb,
			c.StrideB, c.Beta, c.C, c.Ldc, c.StrideC); err != nil {
			return err
		}
	}
	return nil
}
