package cuda

import (
	"fmt"
	"unsafe"
)

// Counters are what a Counting backend has seen: kernel launches (and vendor GEMMs), host
// synchronisations (explicit Syncs and device-to-host copies, which wait for the stream), and
// copies in each direction with their bytes.
type Counters struct {
	Launches, Gemms, Syncs int
	HtoD, DtoH, DtoD       int
	HtoDBytes, DtoHBytes   int64
	LaunchesByKernel       map[string]int
	// AsyncHtoD counts the H→D copies from pinned memory (also in HtoD), which do not wait;
	// FenceWaits the waits for a fence (the staged upload's buffer reuse), which wait only if the
	// stream has not yet passed it: neither is in HostSyncs.
	AsyncHtoD, FenceWaits int
}

// Sub returns c − o (LaunchesByKernel is c's minus o's, zero entries dropped).
func (c Counters) Sub(o Counters) Counters {
	r := Counters{Launches: c.Launches - o.Launches, Gemms: c.Gemms - o.Gemms, Syncs: c.Syncs - o.Syncs,
		HtoD: c.HtoD - o.HtoD, DtoH: c.DtoH - o.DtoH, DtoD: c.DtoD - o.DtoD,
		HtoDBytes: c.HtoDBytes - o.HtoDBytes, DtoHBytes: c.DtoHBytes - o.DtoHBytes, LaunchesByKernel: map[string]int{},
		AsyncHtoD: c.AsyncHtoD - o.AsyncHtoD, FenceWaits: c.FenceWaits - o.FenceWaits}
	for k, v := range c.LaunchesByKernel {
		if d := v - o.LaunchesByKernel[k]; d != 0 {
			r.LaunchesByKernel[k] = d
		}
	}
	return r
}

// HostSyncs is the number of times the host waited for the device: Syncs plus device-to-host
// copies.
func (c Counters) HostSyncs() int { return c.Syncs + c.DtoH }

func (c Counters) String() string {
	return fmt.Sprintf("%d launches (%d GEMM), %d host syncs, %d H→D copies (%d B), %d D→H copies (%d B), %d D→D copies",
		c.Launches+c.Gemms, c.Gemms, c.HostSyncs(), c.HtoD, c.HtoDBytes, c.DtoH, c.DtoHBytes, c.DtoD)
}

// Counting wraps a Backend and counts what passes through it (holdctl bench train prints the
// counts; tests bound them). Use NewCountingDevice. Between StartProfile and StopProfile it also
// times every call on the device, each between two events of its own.
type Counting struct {
	Backend
	c     Counters
	timer Timer                    // the backend's, if it has one
	prof  map[string]*ProfileEntry // by kernel name ("cuBLAS sgemm", "memset", "copy D→D" for the others); nil when not profiling
}

// ProfileEntry is what the calls of one kernel (or of the vendor GEMM, the memsets, the copies)
// took in a profiled run.
type ProfileEntry struct {
	Family  string  `json:"family"`  // the byte model's family (bytemodel.go), "gemm" for cuBLAS, "copy", "memset"
	Calls   int     `json:"calls"`   // launches
	Seconds float64 `json:"seconds"` // device time, each call timed alone (so nothing overlaps)
	Bytes   int64   `json:"bytes"`   // read + written: the byte model's (a kernel without one: 0); GEMMs' operands once
	FLOPs   int64   `json:"flops"`   // the GEMMs' and the implicit convolutions' 2 × multiply-adds
}

// StartProfile starts timing every call (kernel launches, vendor GEMMs, memsets, device copies and
// pinned uploads) with the backend's Timer; a backend without one is refused.
func (c *Counting) StartProfile() error {
	if c.timer == nil {
		return fmt.Errorf("cuda: %s has no device timer: nothing to profile with", c.Backend.Name())
	}
	c.prof = map[string]*ProfileEntry{}
	return nil
}

// StopProfile stops timing and returns the entries by name.
func (c *Counting) StopProfile() map[string]ProfileEntry {
	r := make(map[string]ProfileEntry, len(c.prof))
	for k, v := range c.prof {
		r[k] = *v
	}
	c.prof = nil
	return r
}

// timed runs f, timed into the entry of name when profiling.
func (c *Counting) timed(name, family string, bytes, flops int64, f func() error) error {
	if c.prof == nil {
		return f()
	}
	t, err := c.timer.Time(f)
	e := c.prof[name]
	if e == nil {
		e = &ProfileEntry{Family: family}
		c.prof[name] = e
	}
	e.Calls++
	e.Seconds += t
	e.Bytes += bytes
	e.FLOPs += flops
	return err
}

// countingGemmer is Counting over a backend with a vendor GEMM.
type countingGemmer struct {
	*Counting
	g Gemmer
}

func (cg countingGemmer) Sgemm(g Gemm) error {
	cg.c.Gemms++
	flops := 2 * int64(g.M) * int64(g.N) * int64(g.K) * int64(g.Batch)
	return cg.timed("cuBLAS sgemm", "gemm", gemmBytes(g), flops, func() error { return cg.g.Sgemm(g) })
}

// countingUploader is Counting over a backend with pinned asynchronous uploads (the staged
// batch of a training step, NewStager), and countingGemmerUploader over one with both.
type countingUploader struct {
	*Counting
	u AsyncUploader
}

type countingGemmerUploader struct {
	countingGemmer
	u AsyncUploader
}

func (cu countingUploader) AllocPinned(bytes int) (unsafe.Pointer, error) {
	return cu.u.AllocPinned(bytes)
}
func (cu countingUploader) FreePinned(p unsafe.Pointer) error { return cu.u.FreePinned(p) }
func (cu countingUploader) CopyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int) error {
	cu.c.HtoD++
	cu.c.AsyncHtoD++
	cu.c.HtoDBytes += int64(bytes)
	return cu.timed("copy H→D (pinned)", "copy", int64(bytes), 0, func() error { return cu.u.CopyHtoDAsync(dst, src, bytes) })
}
func (cu countingUploader) NewFence() (Fence, error) {
	f, err := cu.u.NewFence()
	if err != nil {
		return nil, err
	}
	return countingFence{f, cu.Counting}, nil
}

func (cg countingGemmerUploader) AllocPinned(bytes int) (unsafe.Pointer, error) {
	return countingUploader{cg.Counting, cg.u}.AllocPinned(bytes)
}
func (cg countingGemmerUploader) FreePinned(p unsafe.Pointer) error {
	return countingUploader{cg.Counting, cg.u}.FreePinned(p)
}
func (cg countingGemmerUploader) CopyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int) error {
	return countingUploader{cg.Counting, cg.u}.CopyHtoDAsync(dst, src, bytes)
}
func (cg countingGemmerUploader) NewFence() (Fence, error) {
	return countingUploader{cg.Counting, cg.u}.NewFence()
}

// countingFence counts its waits.
type countingFence struct {
	Fence
	c *Counting
}

func (f countingFence) Wait() error { f.c.c.FenceWaits++; return f.Fence.Wait() }

// NewCountingDevice returns a Device on be whose backend counts launches, synchronisations and
// copies, and the counter to read them. It keeps be's vendor GEMM and pinned uploads, so a
// counted training step issues what an uncounted one does.
func NewCountingDevice(be Backend) (*Device, *Counting) {
	c := &Counting{Backend: be, c: Counters{LaunchesByKernel: map[string]int{}}}
	c.timer, _ = be.(Timer)
	g, gemm := be.(Gemmer)
	u, up := be.(AsyncUploader)
	switch {
	case gemm && up:
		return NewDevice(countingGemmerUploader{countingGemmer{c, g}, u}), c
	case gemm:
		return NewDevice(countingGemmer{c, g}), c
	case up:
		return NewDevice(countingUploader{c, u}), c
	}
	return NewDevice(c), c
}

// Counters returns a copy of the counts so far.
func (c *Counting) Counters() Counters {
	r := c.c
	r.LaunchesByKernel = make(map[string]int, len(c.c.LaunchesByKernel))
	for k, v := range c.c.LaunchesByKernel {
		r.LaunchesByKernel[k] = v
	}
	return r
}

func (c *Counting) Launch(name string, grid, block [3]int, sharedBytes int, args []uint64) error {
	c.c.Launches++
	c.c.LaunchesByKernel[name]++
	if c.prof == nil {
		return c.Backend.Launch(name, grid, block, sharedBytes, args)
	}
	fam, bytes, flops := "unmodelled", int64(0), int64(0)
	if m, ok := byteModels[name]; ok && len(args) == m.slots {
		rd, wr := m.bytes(grid, kernelArgs(args))
		fam, bytes = m.family, rd+wr
	}
	if f := flopModels[name]; f != nil {
		flops = f(grid, kernelArgs(args))
	}
	return c.timed(name, fam, bytes, flops, func() error { return c.Backend.Launch(name, grid, block, sharedBytes, args) })
}

func (c *Counting) Sync() error { c.c.Syncs++; return c.Backend.Sync() }

// Zero is the backend's, timed when profiling.
func (c *Counting) Zero(ptr uintptr, bytes int) error {
	return c.timed("memset", "memset", int64(bytes), 0, func() error { return c.Backend.Zero(ptr, bytes) })
}

func (c *Counting) CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int) error {
	c.c.HtoD++
	c.c.HtoDBytes += int64(bytes)
	return c.Backend.CopyHtoD(dst, src, bytes)
}

func (c *Counting) CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int) error {
	c.c.DtoH++
	c.c.DtoHBytes += int64(bytes)
	return c.Backend.CopyDtoH(dst, src, bytes)
}

func (c *Counting) CopyDtoD(dst, src uintptr, bytes int) error {
	c.c.DtoD++
	return c.timed("copy D→D", "copy", 2*int64(bytes), 0, func() error { return c.Backend.CopyDtoD(dst, src, bytes) })
}
