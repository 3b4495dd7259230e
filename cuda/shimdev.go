//go:build cudashim

package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"holdgo/cuda/internal/shim"
)

// ShimBuilt reports whether this binary carries the host shim (-tags cudashim).
const ShimBuilt = true

// NewShimBackend returns the host-shim backend: the CUDA kernels compiled for the CPU
// (cuda/internal/shim). holdctl built with -tags cudashim opens it for --device cuda, so the whole
// GPU path runs, slowly, on a machine without a GPU.
func NewShimBackend() Backend {
	return &shimBackend{Backend: &shim.Backend{}, pinned: map[unsafe.Pointer][]byte{}}
}

// shimBackend is the shim with an AsyncUploader, so that the staged uploads take the GPU's path
// (Device.NewStager): the shim runs every operation when it is issued, so its "pinned" memory is
// Go memory, the asynchronous copy is its synchronous one, and a fence is always passed.
type shimBackend struct {
	*shim.Backend
	mu     sync.Mutex
	pinned map[unsafe.Pointer][]byte // AllocPinned's memory, kept reachable here
}

func (b *shimBackend) AllocPinned(bytes int) (unsafe.Pointer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("shim: pinned allocation of %d bytes", bytes)
	}
	m := make([]byte, bytes)
	p := unsafe.Pointer(&m[0])
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pinned[p] = m
	return p, nil
}

func (b *shimBackend) FreePinned(p unsafe.Pointer) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pinned[p]; !ok {
		return fmt.Errorf("shim: FreePinned of %p, which AllocPinned did not return", p)
	}
	delete(b.pinned, p)
	return nil
}

func (b *shimBackend) CopyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int) error {
	return b.CopyHtoD(dst, src, bytes)
}

func (b *shimBackend) NewFence() (Fence, error) { return shimFence{}, nil }

// shimFence is always passed: the shim's copies are done when they return.
type shimFence struct{}

func (shimFence) Record() error { return nil }
func (shimFence) Wait() error   { return nil }
func (shimFence) Free() error   { return nil }

var _ AsyncUploader = (*shimBackend)(nil)
