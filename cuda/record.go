package cuda

import (
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Record is a Backend that runs nothing and records everything: kernel launches with the bytes
// each reads and writes (the byte models of bytemodel.go), vendor GEMMs with their FLOPs, memsets,
// copies and host synchronisations. A Device on it (NewRecordingDevice) runs the real op dispatch,
// argument packing and memory pool, so a training step issued on it is the launch stream a GPU
// would see, sized without one (holdctl bench train --device record).
//
// What differs from a GPU: kernels, GEMMs and device-to-device copies do not run. The memory is a
// sparse host copy of the device's address space: an address reads the bytes the host last wrote
// there (CopyHtoD) or zeros (Alloc, Zero), so the parameters, the staged batch and the step
// statistics read back as uploaded, and every kernel output reads as zeros. A training step
// therefore sees a loss and gradient norm of 0 (finite: no step is skipped, every guarded update
// is issued as in a normal step). Only pages the host wrote hold host memory, so a step that needs
// 24 GB of device memory runs in a few hundred MB.
//
// Host synchronisations are counted as the driver backend (driver_cuda.go) makes them: Sync,
// SyncSide, every device-to-host copy, every host-to-device copy from Go memory (the driver's
// CopyHtoD waits for its stream: its source is pageable), Free and FreePinned (cuMemFree and
// cuMemFreeHost synchronise the device), and every fence Wait that would block. An asynchronous
// copy from pinned memory (AsyncUploader) is not one. Each is attributed to the first caller
// outside packages cuda and tensor (HostSyncSources). Safe for concurrent use.
//
// Whether a fence Wait would block depends on how far the device lags behind the host, which a
// recorder cannot know; it counts the wait unless the stream is surely past the fence: a host
// synchronisation came after the fence, or at least recordQueueDepth device operations were issued
// after it (the driver queues about a thousand operations on a stream and blocks the host's next
// launch beyond that, so that once the host has issued that many, the fence's work has run).
type Record struct {
	mu     sync.Mutex
	mem    recordMemory
	stats  RecordStats
	ops    int64                     // device operations issued: launches, GEMMs, memsets, copies
	pinned map[unsafe.Pointer][]byte // AllocPinned's memory (Go memory, kept reachable here)
}

// recordQueueDepth is how many operations a stream queues before the host's next one waits: the
// CUDA driver's launch queue holds about 1,000 (NVIDIA developer forums: a host launching small
// kernels on one stream blocks after ~1,000 queued), the recorder's model of when a fence is
// surely passed.
const recordQueueDepth = 1024

// NewRecordingDevice returns a Device named "record" on a new Record with a vendor GEMM (as a GPU
// with cuBLAS), and the recorder to read the counts from.
func NewRecordingDevice() (*Device, *Record) {
	r := &Record{mem: newRecordMemory(), stats: newRecordStats(), pinned: map[unsafe.Pointer][]byte{}}
	return NewDevice(r), r
}

// RecordStats is what a Record has seen; the JSON keys are holdctl bench train --json's.
type RecordStats struct {
	Launches        int              `json:"launches"`     // holdgo's own kernels
	GemmCalls       int              `json:"gemm_calls"`   // vendor (cuBLAS) GEMMs
	GemmFLOPs       int64            `json:"gemm_flops"`   // 2·M·N·K·Batch per GEMM, vendor or implicit convolution (flopModels)
	GemmBytes       int64            `json:"gemm_bytes"`   // each GEMM's operands once: A, B read, C written (and read if β ≠ 0)
	KernelBytes     int64            `json:"kernel_bytes"` // bytes read + written by the own kernels (bytemodel.go)
	HostSyncs       int              `json:"host_syncs"`   // Sync, D→H and synchronous H→D copies, frees, blocking fence waits: every wait of the host for the device
	HostSyncSources map[string]int   `json:"host_sync_by"` // "CopyHtoD ← holdgo/train.(*Trainer).advance": count
	Memsets         int              `json:"memsets"`      // Zero calls
	MemsetBytes     int64            `json:"memset_bytes"` // bytes they clear
	MemsetSources   map[string]int   `json:"memset_by"`    // "Alloc" (every new buffer is zeroed) or the caller of an explicit clear
	HtoD            int              `json:"htod,omitempty"`
	DtoH            int              `json:"dtoh,omitempty"`
	DtoD            int              `json:"dtod,omitempty"`
	HtoDBytes       int64            `json:"htod_bytes,omitempty"`
	DtoHBytes       int64            `json:"dtoh_bytes,omitempty"`
	DtoDBytes       int64            `json:"dtod_bytes,omitempty"`  // bytes copied (each read once and written once)
	Families        map[string]Usage `json:"families"`              // by kernel family (bytemodel.go)
	Kernels         map[string]Usage `json:"kernels"`               // by kernel
	Unmodelled      map[string]int   `json:"unmodelled,omitempty"`  // launches of kernels without a byte model: their bytes are missing from KernelBytes
	ConvShapes      map[string]int   `json:"conv_shapes,omitempty"` // implicit forward convolutions by shape "N,C,H,W,O,K,S,P" (ParseConvShape)
}

// Usage is the launches and bytes of a kernel or a family.
type Usage struct {
	Launches int   `json:"launches"`
	Bytes    int64 `json:"bytes"`
}

func newRecordStats() RecordStats {
	return RecordStats{HostSyncSources: map[string]int{}, MemsetSources: map[string]int{}, Families: map[string]Usage{},
		Kernels: map[string]Usage{}, Unmodelled: map[string]int{}, ConvShapes: map[string]int{}}
}

// clone returns a deep copy of s.
func (s RecordStats) clone() RecordStats {
	r := s
	r.HostSyncSources, r.MemsetSources = maps.Clone(s.HostSyncSources), maps.Clone(s.MemsetSources)
	r.Families, r.Kernels, r.Unmodelled = maps.Clone(s.Families), maps.Clone(s.Kernels), maps.Clone(s.Unmodelled)
	r.ConvShapes = maps.Clone(s.ConvShapes)
	return r
}

// Sub returns s − o: what happened between two snapshots (zero map entries dropped).
func (s RecordStats) Sub(o RecordStats) RecordStats {
	return s.combine(o, -1)
}

// Div returns s with every count divided by n (rounded to the nearest): the mean of n steps.
func (s RecordStats) Div(n int) RecordStats {
	if n <= 1 {
		return s.clone()
	}
	d := func(v int) int { return (v + n/2) / n }
	d64 := func(v int64) int64 { return (v + int64(n)/2) / int64(n) }
	r := s.clone()
	r.Launches, r.GemmCalls, r.HostSyncs, r.Memsets = d(s.Launches), d(s.GemmCalls), d(s.HostSyncs), d(s.Memsets)
	r.HtoD, r.DtoH, r.DtoD = d(s.HtoD), d(s.DtoH), d(s.DtoD)
	r.GemmFLOPs, r.GemmBytes, r.KernelBytes, r.MemsetBytes = d64(s.GemmFLOPs), d64(s.GemmBytes), d64(s.KernelBytes), d64(s.MemsetBytes)
	r.HtoDBytes, r.DtoHBytes, r.DtoDBytes = d64(s.HtoDBytes), d64(s.DtoHBytes), d64(s.DtoDBytes)
	for _, m := range []map[string]int{r.HostSyncSources, r.MemsetSources, r.Unmodelled, r.ConvShapes} {
		for k, v := range m {
			m[k] = d(v)
		}
	}
	for _, m := range []map[string]Usage{r.Families, r.Kernels} {
		for k, v := range m {
			m[k] = Usage{d(v.Launches), d64(v.Bytes)}
		}
	}
	return r
}

// combine returns s + sign·o.
func (s RecordStats) combine(o RecordStats, sign int) RecordStats {
	r := s.clone()
	r.Launches += sign * o.Launches
	r.GemmCalls += sign * o.GemmCalls
	r.HostSyncs += sign * o.HostSyncs
	r.Memsets += sign * o.Memsets
	r.HtoD += sign * o.HtoD
	r.DtoH += sign * o.DtoH
	r.DtoD += sign * o.DtoD
	s64 := int64(sign)
	r.GemmFLOPs += s64 * o.GemmFLOPs
	r.GemmBytes += s64 * o.GemmBytes
	r.KernelBytes += s64 * o.KernelBytes
	r.MemsetBytes += s64 * o.MemsetBytes
	r.HtoDBytes += s64 * o.HtoDBytes
	r.DtoHBytes += s64 * o.DtoHBytes
	r.DtoDBytes += s64 * o.DtoDBytes
	for _, p := range [][2]map[string]int{{r.HostSyncSources, o.HostSyncSources}, {r.MemsetSources, o.MemsetSources}, {r.Unmodelled, o.Unmodelled},
		{r.ConvShapes, o.ConvShapes}} {
		for k, v := range p[1] {
			if p[0][k] += sign * v; p[0][k] == 0 {
				delete(p[0], k)
			}
		}
	}
	for _, p := range [][2]map[string]Usage{{r.Families, o.Families}, {r.Kernels, o.Kernels}} {
		for k, v := range p[1] {
			u := p[0][k]
			u.Launches += sign * v.Launches
			u.Bytes += s64 * v.Bytes
			if u == (Usage{}) {
				delete(p[0], k)
			} else {
				p[0][k] = u
			}
		}
	}
	return r
}

// Stats returns a copy of the counts so far.
func (r *Record) Stats() RecordStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats.clone()
}

// Name is "record".
func (r *Record) Name() string { return "record" }

// Alloc reserves bytes of the address space (no host memory until the host writes there).
func (r *Record) Alloc(bytes int) (uintptr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mem.alloc(bytes), nil
}

// Free releases an allocation and the host pages that held its uploaded bytes, and counts a host
// synchronisation (cuMemFree synchronises the device).
func (r *Record) Free(ptr uintptr) error {
	where := caller()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.free(ptr); err != nil {
		return err
	}
	r.syncLocked("Free ← " + where)
	return nil
}

// Zero clears bytes at ptr (it does run: later host reads see zeros) and counts a memset.
func (r *Record) Zero(ptr uintptr, bytes int) error {
	src := "Alloc"
	if !callerIs("holdgo/cuda.(*Device).Alloc") {
		src = "clear ← " + caller()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.check(ptr, bytes); err != nil {
		return fmt.Errorf("record: zero: %w", err)
	}
	r.mem.zero(ptr, bytes)
	r.ops++
	r.stats.Memsets++
	r.stats.MemsetBytes += int64(bytes)
	r.stats.MemsetSources[src]++
	return nil
}

// CopyHtoD stores the host's bytes (it does run) and counts a copy and, as the driver waits for
// its stream after one, a host synchronisation.
func (r *Record) CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int) error {
	where := caller()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.check(dst, bytes); err != nil {
		return fmt.Errorf("record: copy to the device: %w", err)
	}
	r.mem.write(dst, unsafe.Slice((*byte)(src), bytes))
	r.ops++
	r.stats.HtoD++
	r.stats.HtoDBytes += int64(bytes)
	r.syncLocked("CopyHtoD ← " + where)
	return nil
}

// CopyDtoH returns the bytes the host last wrote at src, or zeros (kernel outputs).
func (r *Record) CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int) error {
	where := caller()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.check(src, bytes); err != nil {
		return fmt.Errorf("record: copy to the host: %w", err)
	}
	r.mem.read(unsafe.Slice((*byte)(dst), bytes), src)
	r.ops++
	r.stats.DtoH++
	r.stats.DtoHBytes += int64(bytes)
	r.syncLocked("CopyDtoH ← " + where)
	return nil
}

// CopyDtoD is device work: counted, not run.
func (r *Record) CopyDtoD(dst, src uintptr, bytes int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.check(dst, bytes); err != nil {
		return fmt.Errorf("record: device copy destination: %w", err)
	}
	if err := r.mem.check(src, bytes); err != nil {
		return fmt.Errorf("record: device copy source: %w", err)
	}
	r.ops++
	r.stats.DtoD++
	r.stats.DtoDBytes += int64(bytes)
	return nil
}

// OptInShared accepts what a GPU accepts.
func (r *Record) OptInShared(name string, bytes int) error {
	if bytes > maxOptInShared {
		return fmt.Errorf("record: %s: %d bytes of shared memory (at most %d)", name, bytes, maxOptInShared)
	}
	return nil
}

// Launch counts the launch and the bytes its kernel's model gives (bytemodel.go); a kernel with no
// model is counted in Unmodelled.
func (r *Record) Launch(name string, grid, block [3]int, sharedBytes int, args []uint64) error {
	m, ok := byteModels[name]
	var bytes int64
	if ok {
		if len(args) != m.slots {
			return fmt.Errorf("record: %s launched with %d argument slots, its byte model reads %d", name, len(args), m.slots)
		}
		rd, wr := m.bytes(grid, kernelArgs(args))
		bytes = rd + wr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops++
	r.stats.Launches++
	fam := "unmodelled"
	if ok {
		fam = m.family
	} else {
		r.stats.Unmodelled[name]++
	}
	r.stats.KernelBytes += bytes
	if ok && strings.HasPrefix(name, "hg_conv_fwd_") {
		a := kernelArgs(args)
		r.stats.ConvShapes[fmt.Sprintf("%d,%d,%d,%d,%d,%d,%d,%d", a.i(0), a.i(1), a.i(2), a.i(3), a.i(4), a.i(5), a.i(6), a.i(7))]++
	}
	if f := flopModels[name]; f != nil {
		r.stats.GemmFLOPs += f(grid, kernelArgs(args))
	}
	for _, p := range []struct {
		m map[string]Usage
		k string
	}{{r.stats.Families, fam}, {r.stats.Kernels, name}} {
		u := p.m[p.k]
		p.m[p.k] = Usage{u.Launches + 1, u.Bytes + bytes}
	}
	return nil
}

// Sync counts a host synchronisation.
func (r *Record) Sync() error {
	where := caller()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncLocked("Sync ← " + where)
	return nil
}

func (r *Record) syncLocked(source string) {
	r.stats.HostSyncs++
	r.stats.HostSyncSources[source]++
}

// Sgemm counts a vendor GEMM, its FLOPs and its operands' bytes (GemmBytes).
func (r *Record) Sgemm(g Gemm) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops++
	r.stats.GemmCalls++
	r.stats.GemmFLOPs += 2 * int64(g.M) * int64(g.N) * int64(g.K) * int64(g.Batch)
	r.stats.GemmBytes += gemmBytes(g)
	return nil
}

// gemmBytes is 4 bytes per element of each operand, once: A (M·K per batch entry, once if its
// stride is 0), B likewise, C written (M·N per entry) and read too when β ≠ 0.
func gemmBytes(g Gemm) int64 {
	per := func(elems, stride int) int64 {
		if stride == 0 {
			return int64(elems)
		}
		return int64(elems) * int64(g.Batch)
	}
	c := int64(g.M) * int64(g.N) * int64(g.Batch)
	if g.Beta != 0 {
		c *= 2
	}
	return 4 * (per(g.M*g.K, g.StrideA) + per(g.K*g.N, g.StrideB) + c)
}

// recordStream is the side stream's handle on the recorder: not nil, never dereferenced.
var recordStream byte

// OnSide implements SideStreamer: f runs at once with a handle that names no stream (the
// recorder's NCCL engine, as the other rank-local engines, is given a Collective that does not
// use it).
func (r *Record) OnSide(f func(stream unsafe.Pointer) error) error {
	return f(unsafe.Pointer(&recordStream))
}

// SideWaitsMain implements SideStreamer (nothing to order: nothing runs).
func (r *Record) SideWaitsMain() error { return nil }

// MainWaitsSide implements SideStreamer.
func (r *Record) MainWaitsSide() error { return nil }

// SyncSide implements SideStreamer: a host synchronisation.
func (r *Record) SyncSide() error {
	where := caller()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncLocked("SyncSide ← " + where)
	return nil
}

// AllocPinned implements AsyncUploader: host memory (Go's, held by the recorder until FreePinned).
func (r *Record) AllocPinned(bytes int) (unsafe.Pointer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("record: pinned allocation of %d bytes", bytes)
	}
	b := make([]byte, bytes)
	p := unsafe.Pointer(&b[0])
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pinned[p] = b
	return p, nil
}

// FreePinned implements AsyncUploader, and counts a host synchronisation (cuMemFreeHost
// synchronises the device).
func (r *Record) FreePinned(p unsafe.Pointer) error {
	where := caller()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pinned[p]; !ok {
		return fmt.Errorf("record: FreePinned of %p, which AllocPinned did not return", p)
	}
	delete(r.pinned, p)
	r.syncLocked("FreePinned ← " + where)
	return nil
}

// CopyHtoDAsync implements AsyncUploader: it stores the host's bytes (it does run) and counts a
// copy, not a host synchronisation.
func (r *Record) CopyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.check(dst, bytes); err != nil {
		return fmt.Errorf("record: asynchronous copy to the device: %w", err)
	}
	r.mem.write(dst, unsafe.Slice((*byte)(src), bytes))
	r.ops++
	r.stats.HtoD++
	r.stats.HtoDBytes += int64(bytes)
	return nil
}

// NewFence implements AsyncUploader.
func (r *Record) NewFence() (Fence, error) { return &recordFence{r: r, recorded: -1}, nil }

// recordFence is a fence of the recorder: where it was recorded, in device operations and host
// synchronisations issued before it.
type recordFence struct {
	r        *Record
	recorded int64 // r.ops at Record; -1: never recorded (a wait returns at once, as on a GPU)
	syncs    int
}

func (f *recordFence) Record() error {
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	f.recorded, f.syncs = f.r.ops, f.r.stats.HostSyncs
	return nil
}

// Wait counts a host synchronisation unless the stream is surely past the fence (Record's doc).
func (f *recordFence) Wait() error {
	where := caller()
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	if f.recorded < 0 || f.r.stats.HostSyncs > f.syncs || f.r.ops-f.recorded >= recordQueueDepth {
		return nil
	}
	f.r.syncLocked("fence Wait ← " + where)
	return nil
}

func (f *recordFence) Free() error { return nil }

var (
	_ Gemmer        = (*Record)(nil)
	_ SideStreamer  = (*Record)(nil)
	_ AsyncUploader = (*Record)(nil)
)

// caller names the first function on the stack outside packages cuda and tensor (and the
// runtime): where a synchronisation or a clear comes from.
func caller() string {
	var pcs [32]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
	for {
		f, more := frames.Next()
		fn := f.Function
		if !strings.HasPrefix(fn, "holdgo/cuda.") && !strings.HasPrefix(fn, "holdgo/tensor.") && !strings.HasPrefix(fn, "runtime.") {
			return fn
		}
		if !more {
			return "?"
		}
	}
}

// callerIs reports whether function fn is on the stack.
func callerIs(fn string) bool {
	var pcs [16]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
	for {
		f, more := frames.Next()
		if f.Function == fn {
			return true
		}
		if !more {
			return false
		}
	}
}

// recordMemory is a sparse address space: allocations are ranges of addresses handed out in
// increasing order, each aligned to a page; a page holds host memory only once the host has
// written into it, and reads of other pages return zeros.
type recordMemory struct {
	next   uintptr
	allocs map[uintptr]int // base → bytes
	bases  []uintptr       // live and freed bases in increasing order (freed: not in allocs)
	pages  map[uintptr][]byte
}

const recordPage = 64 << 10

func newRecordMemory() recordMemory {
	return recordMemory{next: 1 << 32, allocs: map[uintptr]int{}, pages: map[uintptr][]byte{}}
}

func (m *recordMemory) alloc(bytes int) uintptr {
	p := m.next
	m.next += uintptr((max(bytes, 1) + recordPage - 1) / recordPage * recordPage)
	m.allocs[p] = bytes
	m.bases = append(m.bases, p)
	return p
}

func (m *recordMemory) free(p uintptr) error {
	n, ok := m.allocs[p]
	if !ok {
		return fmt.Errorf("record: free of %#x, which is not an allocation", p)
	}
	for a := p; a < p+uintptr(n); a += recordPage {
		delete(m.pages, a)
	}
	delete(m.allocs, p)
	return nil
}

// check reports an error unless [p, p+n) lies inside a live allocation.
func (m *recordMemory) check(p uintptr, n int) error {
	// The allocation holding p is the last base ≤ p.
	lo, hi := 0, len(m.bases)
	for lo < hi {
		mid := (lo + hi) / 2
		if m.bases[mid] <= p {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo > 0 {
		base := m.bases[lo-1]
		if size, ok := m.allocs[base]; ok && p+uintptr(n) <= base+uintptr(size) {
			return nil
		}
	}
	return fmt.Errorf("%d bytes at %#x are not inside an allocation", n, p)
}

// each calls f for every page that [p, p+n) touches with the page's base and the range's part of
// it, [lo, hi) relative to the page.
func each(p uintptr, n int, f func(page uintptr, lo, hi int)) {
	end := p + uintptr(n)
	for a := p; a < end; {
		page := a &^ (recordPage - 1)
		hi := min(end, page+recordPage)
		f(page, int(a-page), int(hi-page))
		a = hi
	}
}

func (m *recordMemory) write(p uintptr, src []byte) {
	off := 0
	each(p, len(src), func(page uintptr, lo, hi int) {
		b := m.pages[page]
		if b == nil {
			b = make([]byte, recordPage)
			m.pages[page] = b
		}
		off += copy(b[lo:hi], src[off:])
	})
}

func (m *recordMemory) read(dst []byte, p uintptr) {
	off := 0
	each(p, len(dst), func(page uintptr, lo, hi int) {
		if b := m.pages[page]; b != nil {
			copy(dst[off:off+hi-lo], b[lo:hi])
		} else {
			clear(dst[off : off+hi-lo])
		}
		off += hi - lo
	})
}

func (m *recordMemory) zero(p uintptr, n int) {
	each(p, n, func(page uintptr, lo, hi int) {
		b := m.pages[page]
		switch {
		case b == nil:
		case lo == 0 && hi == recordPage:
			delete(m.pages, page)
		default:
			clear(b[lo:hi])
		}
	})
}

// ParseConvShape reads a key of RecordStats.ConvShapes.
func ParseConvShape(key string) (ConvGeom, error) {
	var g ConvGeom
	if _, err := fmt.Sscanf(key, "%d,%d,%d,%d,%d,%d,%d,%d", &g.N, &g.C, &g.H, &g.W, &g.O, &g.K, &g.S, &g.P); err != nil {
		return g, fmt.Errorf("cuda: convolution shape %q: %w", key, err)
	}
	return g, nil
}
