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
// counts; tests bound them). Use NewCountingDevice.
type Counting struct {
	Backend
	c Counters
}

// countingGemmer is Counting over a backend with a vendor GEMM.
type countingGemmer struct {
	*Counting
	g Gemmer
}

func (cg countingGemmer) Sgemm(g Gemm) error { cg.c.Gemms++; return cg.g.Sgemm(g) }

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
	return cu.u.CopyHtoDAsync(dst, src, bytes)
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
	return c.Backend.Launch(name, grid, block, sharedBytes, args)
}

func (c *Counting) Sync() error { c.c.Syncs++; return c.Backend.Sync() }

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
	return c.Backend.CopyDtoD(dst, src, bytes)
}
