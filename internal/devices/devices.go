// Package devices opens the tensor.Device a command names (--device: cpu, reference, cuda, cuda:N)
// in this build, and holds what else depends on the build's CUDA: the GPU a data-parallel rank takes,
// the line each rank writes, the libraries a CUDA device loads, and the kernel benchmark's driver.
// Three builds: -tags cuda (the driver), -tags cudashim (holdctl-shim: the host shim), neither (no CUDA,
// every CUDA request refused with how to get a CUDA build).
package devices

import (
	"fmt"
	"io"
	"strings"

	"holdgo/cuda"
	"holdgo/dist"
	"holdgo/internal/budget"
	"holdgo/tensor"
	"holdgo/train"
)

// Record is the --device of holdctl bench train that runs nothing and records what a training step
// issues to a GPU (cuda.NewRecordingDevice, every build; docs/gpu.md, "Sizing a step without a GPU").
// Open refuses it: a command that trained, sampled or checked ops on it would run nothing and
// report zeros as results.
const Record = "record"

// OpenWithPrecision returns Open with the GPU arithmetic p of --precision (train.CheckPrecision:
// tf32, strict or bf16) set on the device it opens (the CUDA device's SetPrecision); the CPU and
// Reference devices compute in FP32 either way.
func OpenWithPrecision(p string) (func(name string) (tensor.Device, error), error) {
	if err := train.CheckPrecision(p); err != nil {
		return nil, fmt.Errorf("--precision: %w", err)
	}
	return func(name string) (tensor.Device, error) {
		d, err := Open(name)
		if err != nil {
			return nil, err
		}
		SetPrecision(d, p)
		return d, nil
	}, nil
}

// SetPrecision sets the arithmetic p (already checked) on d where d has a choice (a CUDA device).
func SetPrecision(d tensor.Device, p string) {
	if s, ok := d.(interface{ SetPrecision(string) }); ok {
		s.SetPrecision(p)
	}
}

// Open returns the device named by --device: "cpu", "reference", or "cuda" / "cuda:N",
// which OpenCUDA of the build (devices_cuda.go, devices_shim.go, devices_nocuda.go) opens or
// refuses with a message that says how to get a CUDA build. Record is refused with a message
// naming the command that takes it.
func Open(name string) (tensor.Device, error) {
	switch {
	case name == "" || name == "cpu":
		return tensor.CPU, nil
	case name == "reference":
		return tensor.Reference, nil
	case name == Record:
		return nil, fmt.Errorf("--device %s counts what a training step would issue to a GPU without running anything: only holdctl bench train takes it; use cpu, reference, cuda or cuda:N", Record)
	case name == "cuda" || strings.HasPrefix(name, "cuda:"):
		d, err := OpenCUDA(name)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, fmt.Errorf("unknown device %q (want cpu, reference, cuda or cuda:N)", name)
}

// ForRank is the --device that a rank of a run of ranks > 1 opens: "cuda" without an ordinal
// becomes cuda:N, N the GPU of the rank's local rank on its node (dist.LocalRank from lookup,
// os.LookupEnv in holdctl; dist.DeviceForLocalRank over the count GPUs visible: local rank N takes
// GPU N, one visible GPU serves every rank, more ranks than GPUs is an error). One rank, an
// explicit cuda:N, another device or no local rank in the environment leave name as it is.
func ForRank(name string, ranks int, lookup func(string) (string, bool), count func() (int, error)) (string, error) {
	if name != "cuda" || ranks < 2 {
		return name, nil
	}
	local, source, ok, err := dist.LocalRank(lookup)
	if err != nil || !ok {
		return name, err
	}
	n, err := count()
	if err != nil {
		return "", fmt.Errorf("--device cuda for local rank %d (%s): %w", local, source, err)
	}
	ordinal, err := dist.DeviceForLocalRank(local, n)
	if err != nil {
		return "", fmt.Errorf("--device cuda for local rank %d (%s): %w", local, source, err)
	}
	return fmt.Sprintf("cuda:%d", ordinal), nil
}

// RankLine is the line each rank of a run of several processes writes once at start: where it runs
// and on what ("rank 1 of 4: host node2, device NVIDIA H100 80GB HBM3 (sm_90 PTX) (bus id
// 00000000:19:00.0)"), so a log shows which GPU every rank took.
func RankLine(rank, size int, host string, dev tensor.Device) string {
	what := "device " + dev.Name()
	if cd, ok := dev.(*cuda.Device); ok {
		bus := "none" // the host shim
		if b, ok := cd.Backend().(interface{ BusID() string }); ok {
			bus = b.BusID()
		}
		what = fmt.Sprintf("device %s (bus id %s)", BackendName(cd.Backend()), bus)
	}
	return fmt.Sprintf("rank %d of %d: host %s, %s", rank, size, host, what)
}

// BackendName is the GPU's name where the backend knows it.
func BackendName(be cuda.Backend) string {
	if n, ok := be.(interface{ DeviceName() string }); ok {
		return n.DeviceName()
	}
	return be.Name()
}

// CheckDist checks --dist before anything is made: host, or nccl on --device cuda with an NCCL that
// loads (the error names every path tried). Every error is the user's.
func CheckDist(mode, device string) error {
	switch mode {
	case "", "host":
		return nil
	case "nccl":
	default:
		return fmt.Errorf("--dist %q: want host or nccl", mode)
	}
	if device != "cuda" && !strings.HasPrefix(device, "cuda:") {
		return fmt.Errorf("--dist nccl sums gradients in GPU memory: it needs --device cuda (got --device %s)", device)
	}
	if _, err := cuda.NCCLInfo(); err != nil {
		return fmt.Errorf("--dist nccl: %v", err)
	}
	return nil
}

// DeviceComm is train.RunOptions.DeviceComm for --dist mode: nil for host (the host all-reduce);
// for nccl the NCCL engine on the rank's GPU (cuda.OpenNCCL, pinned to one algorithm under
// --precision strict) and the line that says which NCCL and settings the run uses.
func DeviceComm(mode string) func(tensor.Device, dist.Communicator, train.RunConfig) (dist.DeviceComm, string, error) {
	if mode != "nccl" {
		return nil
	}
	return func(dev tensor.Device, comm dist.Communicator, cfg train.RunConfig) (dist.DeviceComm, string, error) {
		cd, ok := dev.(*cuda.Device)
		if !ok {
			return nil, "", fmt.Errorf("nccl needs --device cuda, not %s", dev.Name())
		}
		eng, rec, err := cuda.OpenNCCL(cd, comm, cfg.Strict())
		if err != nil {
			return nil, "", err
		}
		return eng, fmt.Sprintf("--dist nccl: %d ranks, %s", comm.Size(), rec), nil
	}
}

// MemoryError is a kernel benchmark over the memory budget: it unwraps to budget.ErrExceeded (bad
// input).
type MemoryError struct{ msg string }

func (e *MemoryError) Error() string { return e.msg }
func (e *MemoryError) Unwrap() error { return budget.ErrExceeded }

// checkKernelMemory refuses (a *MemoryError) a kernel benchmark whose buffers would not fit the memory
// budget, naming both size flags with their values and what each alone needs, before anything is
// allocated. A GPU keeps the workloads' tensors in its own memory and only the staging of one upload
// counts (onHost false); on the host shim the device memory is host memory too (onHost true).
func checkKernelMemory(o cuda.BenchOptions, onHost bool) error {
	need := func(o cuda.BenchOptions) int64 {
		m := cuda.BenchMemoryOf(o)
		if onHost {
			return m.Device + m.Host
		}
		return m.Host
	}
	total := need(o)
	if total <= budget.Limit() {
		return nil
	}
	where := "host memory for staging the uploads"
	if onHost {
		where = "host memory (the shim's device memory is host memory)"
	}
	alone := func(o cuda.BenchOptions) string { return budget.Format(need(o)) }
	return &MemoryError{fmt.Sprintf("bench kernels --elements %d --gemm %d: the workloads need %s of %s, over the memory budget of %s (--max-memory); give a smaller --elements (%d alone needs %s) or --gemm (%d alone needs %s)",
		o.Elements, o.GemmSize, budget.Format(total), where, budget.Format(budget.Limit()),
		o.Elements, alone(cuda.BenchOptions{Elements: o.Elements, GemmSize: 1}), o.GemmSize, alone(cuda.BenchOptions{Elements: 1, GemmSize: o.GemmSize}))}
}

// benchKernels checks the workloads against the memory budget, opens the CUDA device name and times
// every CUDA kernel family on it (cuda.BenchKernels), printing the table.
func benchKernels(w io.Writer, name string, opts cuda.BenchOptions, onHost bool) error {
	if err := checkKernelMemory(opts, onHost); err != nil {
		return err
	}
	dev, err := OpenCUDA(name)
	if err != nil {
		return err
	}
	res, err := cuda.BenchKernels(dev, opts)
	if err != nil {
		return err
	}
	cuda.WriteBenchTable(w, dev, res)
	return nil
}
