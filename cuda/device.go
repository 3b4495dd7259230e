// Package cuda is holdgo's GPU device: a tensor.Device whose memory lives on an NVIDIA GPU and
// whose ops run the CUDA C kernels of holdgo/kernels (PTX embedded in the binary, loaded through
// gorgonia.org/cu) and cuBLAS.
//
// The package splits at the Backend interface. Everything above it — the op dispatch, argument
// packing, launch configuration and the memory pool — is plain Go, built by default and tested
// against a fake backend and against the host shim (cuda/internal/shim, -tags cudashim), which runs
// the same kernel sources on the CPU. Below it, the driver backend (driver_cuda.go) exists only
// with -tags cuda; without the tag Open returns ErrNotBuilt, so the default build needs neither
// cgo nor CUDA.
package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"holdgo/tensor"
)

// Device runs the tensor op list, and the fused families of this package, on a Backend.
// Like a CUDA stream it is not safe for concurrent use.
type Device struct {
	be   Backend
	name string
	pool *pool
	gemm Gemmer // nil: MatMul uses hg_sgemm

	optIn    map[string]int // kernels opted in to more dynamic shared memory: bytes, −1 refused (launch.go)
	optInErr error

	// StrictFP32 turns off the TF32 tensor-core mode, on by default on a GPU: MatMul (cuBLAS) and
	// the convolutions then run in full FP32 (about 8× slower on an A100/H100). The hg_sgemm kernel
	// and the host shim are FP32 (the shim's convolutions run TF32 only with TF32Convs).
	StrictFP32 bool

	// BF16 runs the products in BF16 (8 significant bits, FP32 accumulation) where StrictFP32 is
	// off: the convolutions on the BF16 tensor-core kernels (on the host shim too, emulated), and
	// MatMul on cuBLAS with CUBLAS_COMPUTE_32F_FAST_16BF (hg_sgemm stays FP32). Tensors, master
	// weights and the optimizer stay FP32 in device memory: BF16 storage is not built.
	BF16 bool

	// ConvChunkBytes bounds the im2col buffer of one convolution chunk (0: DefaultConvChunkBytes).
	ConvChunkBytes int

	// Im2colConv runs the convolutions through im2col and GEMMs (the path before the implicit-GEMM
	// kernels of conv.go; kept for comparisons and tests).
	Im2colConv bool
	// TF32Convs runs the implicit convolutions' TF32 tensor-core kernels on a device without a
	// vendor GEMM (the host shim, where they are emulated: warp.cuh); with a vendor GEMM they run
	// unless StrictFP32.
	TF32Convs bool
	// ConvTile (64 or 128) and ConvSplits (> 0) override the implicit kernels' tile and the weight
	// gradient's number of splits, chosen from the shape otherwise (conv.go: convPlan).
	ConvTile, ConvSplits int
	// Tiles is the measured tile table in use (tiles.go; ConvTileKey → 64 or 128), which overrides
	// the shape rule where it has the convolution: NewDevice sets the committed table of the GPU
	// and build, if there is one.
	Tiles map[string]int
}

// NewDevice returns a Device on be. Open returns one on the first GPU.
func NewDevice(be Backend) *Device {
	d := &Device{be: be, name: be.Name(), pool: newPool(be), optIn: map[string]int{}}
	if n, ok := be.(interface{ DeviceName() string }); ok {
		d.Tiles, _ = committedTileTable(n.DeviceName()) // a malformed committed file is a build error: TestCommittedTiles
	}
	if g, ok := be.(Gemmer); ok {
		d.gemm = g
	}
	return d
}

// SetPrecision sets the arithmetic of --precision (already checked: train.CheckPrecision):
// "strict" sets StrictFP32, "bf16" BF16, anything else ("tf32", "") neither. train and
// internal/devices call it through an interface (train does not import cuda).
func (d *Device) SetPrecision(p string) { d.StrictFP32, d.BF16 = p == "strict", p == "bf16" }

// Precision names the arithmetic set (SetPrecision's argument): "strict", "bf16" or "tf32".
func (d *Device) Precision() string {
	switch {
	case d.StrictFP32:
		return "strict"
	case d.BF16:
		return "bf16"
	}
	return "tf32"
}

// Name reports the backend's name ("cuda", "shim", …).
func (d *Device) Name() string { return d.name }

// Backend returns the device's backend.
func (d *Device) Backend() Backend { return d.be }

// PoolStats reports the memory pool's counters.
func (d *Device) PoolStats() PoolStats { return d.pool.snapshot() }

// Trim frees the memory the pool caches (memory of live tensors stays).
func (d *Device) Trim() error { return d.pool.trim() }

// Sync waits for all issued work.
func (d *Device) Sync() error { return d.be.Sync() }

// buffer is a tensor's device storage: a pool block, returned to the pool when the buffer becomes
// unreachable.
type buffer struct {
	dev *Device
	ptr uintptr
	n   int
}

func (b *buffer) Device() tensor.Device { return b.dev }
func (b *buffer) Len() int              { return b.n }

// Slice returns n elements from offset on as a buffer that aliases b's memory and keeps it alive.
func (b *buffer) Slice(offset, n int) (tensor.Buffer, error) {
	if offset < 0 || n < 0 || offset+n > b.n {
		return nil, fmt.Errorf("cuda: view of %d elements at %d in a buffer of %d", n, offset, b.n)
	}
	v := &buffer{dev: b.dev, ptr: b.ptr + uintptr(4*offset), n: n}
	runtime.AddCleanup(v, func(p *buffer) { runtime.KeepAlive(p) }, b)
	return v, nil
}

func (b *buffer) Read(dst []float32) error {
	if len(dst) != b.n {
		return fmt.Errorf("cuda: read %d elements from a buffer of %d", len(dst), b.n)
	}
	if b.n == 0 {
		return nil
	}
	err := b.dev.be.CopyDtoH(unsafe.Pointer(&dst[0]), b.ptr, 4*b.n)
	runtime.KeepAlive(b)
	return err
}

func (b *buffer) Write(src []float32) error {
	if len(src) != b.n {
		return fmt.Errorf("cuda: write %d elements to a buffer of %d", len(src), b.n)
	}
	if b.n == 0 {
		return nil
	}
	err := b.dev.be.CopyHtoD(b.ptr, unsafe.Pointer(&src[0]), 4*b.n)
	runtime.KeepAlive(b)
	return err
}

type block struct {
	ptr   uintptr
	class int
}

// Alloc returns n zeroed float32 elements of device memory from the pool.
func (d *Device) Alloc(n int) (tensor.Buffer, error) {
	b := &buffer{dev: d, n: n}
	if n == 0 {
		return b, nil
	}
	ptr, class, err := d.pool.get(4 * n)
	if err != nil {
		return nil, err
	}
	if err := d.be.Zero(ptr, 4*n); err != nil {
		d.pool.put(ptr, class)
		return nil, fmt.Errorf("cuda: zero %d bytes: %w", 4*n, err)
	}
	b.ptr = ptr
	runtime.AddCleanup(b, func(blk block) { d.pool.put(blk.ptr, blk.class) }, block{ptr, class})
	return b, nil
}

// scratch is temporary device memory for one op (index lists, coefficients, partial results).
// Release it right after issuing the work that uses it: later users are ordered after that work
// on the same stream.
type scratch struct {
	block
	bytes int
}

func (d *Device) scratch(bytes int) (scratch, error) {
	ptr, class, err := d.pool.get(max(bytes, 1))
	return scratch{block{ptr, class}, bytes}, err
}

func (d *Device) release(s scratch) { d.pool.put(s.ptr, s.class) }

// upload copies host values to a new scratch block.
func upload[T int32 | float32 | float64](d *Device, v []T) (scratch, error) {
	size := int(unsafe.Sizeof(*new(T))) * len(v)
	s, err := d.scratch(size)
	if err != nil || len(v) == 0 {
		return s, err
	}
	if err := d.be.CopyHtoD(s.ptr, unsafe.Pointer(&v[0]), size); err != nil {
		d.release(s)
		return s, fmt.Errorf("cuda: upload %d bytes: %w", size, err)
	}
	return s, nil
}

// ptrOf returns the device address of a tensor on d.
func (d *Device) ptrOf(t *tensor.Tensor) (uintptr, error) {
	b, ok := t.Buffer().(*buffer)
	if !ok || b.dev != d {
		return 0, fmt.Errorf("cuda: tensor %v is not on device %s", t.Shape(), d.name)
	}
	return b.ptr, nil
}

// ptrs returns the device addresses of tensors on d.
func (d *Device) ptrs(ts ...*tensor.Tensor) ([]uintptr, error) {
	out := make([]uintptr, len(ts))
	for i, t := range ts {
		p, err := d.ptrOf(t)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// Exec runs one op of the tensor op list. Tensors of 2³¹ elements or more return
// tensor.ErrUnsupported; there is never a silent fallback to another device.
func (d *Device) Exec(op tensor.Op, out *tensor.Tensor, in ...*tensor.Tensor) error {
	if err := d.exec(op, out, in); err != nil {
		return fmt.Errorf("%v: %w", op.Kind, err)
	}
	return nil
}

func (d *Device) exec(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor) error {
	o, err := d.ptrOf(out)
	if err != nil {
		return err
	}
	ip, err := d.ptrs(in...)
	if err != nil {
		return err
	}
	n := out.Len()
	if op.Kind.Class() == tensor.ClassFused {
		if n >= 1<<31 {
			return fmt.Errorf("%d elements: %w", n, tensor.ErrUnsupported)
		}
		return d.fusedOp(op, out, in, o, ip) // fusedops.go
	}
	if n == 0 && op.Kind != tensor.OpSliceAdd && op.Kind != tensor.OpScatterAdd {
		return nil
	}
	if n >= 1<<31 {
		return fmt.Errorf("%d elements: %w", n, tensor.ErrUnsupported)
	}
	// The element-wise ops run on hg_unary and hg_binary with their op codes (opcodes_gen.go,
	// generated from the op table like the kernels' kernels/ops_gen.h).
	if code, ok := unaryCodes[op.Kind]; ok {
		return d.hgUnary(grid1D(n), n, code, op.Scalar, ip[0], o)
	}
	if code, ok := binaryCodes[op.Kind]; ok {
		return d.binary(code, out, in[0], in[1], o, ip[0], ip[1])
	}
	switch op.Kind {
	case tensor.OpFill:
		if op.Scalar == 0 && !math.Signbit(float64(op.Scalar)) { // a memset, no launch (zeroing gradients)
			return d.be.Zero(o, 4*n)
		}
		return d.hgFill(grid1D(n), n, op.Scalar, o)
	case tensor.OpCopy:
		if o == ip[0] {
			return nil
		}
		return d.be.CopyDtoD(o, ip[0], 4*n)
	case tensor.OpMatMul:
		return d.matMul(op, out, in[0], in[1], o, ip[0], ip[1])
	case tensor.OpSum, tensor.OpMax:
		kind := reduceSum
		if op.Kind == tensor.OpMax {
			kind = reduceMax
		}
		return d.reduce(kind, op.Axes, in[0].Shape(), o, ip[0])
	case tensor.OpPermute:
		return d.permute(op.Axes, out, in[0], o, ip[0])
	case tensor.OpConcat:
		return d.concat(op.Axis, out, in, o, ip)
	case tensor.OpSlice:
		return d.slice(op, out, in[0], o, ip[0], false)
	case tensor.OpSliceAdd:
		return d.slice(op, in[0], out, ip[0], o, true)
	case tensor.OpGather, tensor.OpScatterAdd:
		return d.rows(op, out, in[0], o, ip[0])
	case tensor.OpSoftmax:
		rows, cols := lastAxis(out)
		return d.hgSoftmaxFwd(gridRows(rows), rows, cols, op.Scalar, ip[0], o)
	case tensor.OpSoftmaxGrad:
		rows, cols := lastAxis(out)
		return d.hgSoftmaxBwd(gridRows(rows), rows, cols, op.Scalar, ip[0], ip[1], o)
	case tensor.OpConv2d, tensor.OpConv2dResidual:
		return d.conv2d(op, out, in, o, ip)
	case tensor.OpConv2dGradInput:
		return d.conv2dGradInput(op, out, in, o, ip)
	case tensor.OpConv2dGradWeight:
		return d.conv2dGradWeight(op, out, in, o, ip)
	case tensor.OpGroupNorm, tensor.OpGroupNormSiLU, tensor.OpGroupNormBackward, tensor.OpGroupNormSiLUBackward:
		return d.groupNorm(op, in[0], o, ip) // groupnorm.go
	case tensor.OpUpFIRDn2d:
		return d.firOp(op, out, in[0], o, ip[0])
	}
	return tensor.ErrUnsupported
}

// firOp runs OpUpFIRDn2d with the separable filter K = t·tᵀ·Scalar, t = tensor.FIRTaps, passed
// as kernel parameters: no upload, no host synchronisation.
func (d *Device) firOp(op tensor.Op, out, x *tensor.Tensor, o, px uintptr) error {
	h, w, oh, ow := x.Dim(2), x.Dim(3), out.Dim(2), out.Dim(3)
	t := tensor.FIRTaps
	return d.hgUpfirdn2dSep(grid1D(out.Len()), x.Dim(0)*x.Dim(1), h, w, max(op.Up, 1), max(op.Down, 1), op.Pad, oh, ow,
		t[0], t[1], t[2], t[3], op.Scalar, px, o)
}
