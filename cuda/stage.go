package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"holdgo/tensor"
)

// Stager is an upload into one device tensor from page-locked host memory that the host does not
// wait for (Device.NewStager). It is a type alias of an unnamed interface so that a package that
// does not import cuda (train) names the same type, and finds NewStager on a tensor.Device.
type Stager = interface {
	// Host returns the host memory of the next upload, as many float32 as the tensor holds: the
	// pinned buffer that the upload before last read, once that copy has finished (the host waits
	// only if it has not). It stays valid until the next Upload.
	Host() ([]float32, error)
	// Upload enqueues the copy of Host's memory into the tensor, ordered with the device work
	// issued before and after it, and returns without waiting for it.
	Upload() error
}

// NewStager returns a ring-buffered upload into dst from pinned host memory: stagerBuffers (3)
// buffers taken in turn, each guarded by a fence recorded after the copy that reads it, so that
// the host fills one while the copies of the others may still be queued. In the steady state the
// fence that Host waits for is two uploads old (two training steps' work ago) and has long been
// passed: the upload costs the host no synchronisation, where Write (Backend.CopyHtoD from Go
// memory) costs one. (Two buffers left a fence only one step old; a small network's step, a few
// hundred launches once the convolutions became one kernel each, could then still be queued
// behind it.) The
// pinned memory and fences are released once the stager is unreachable. On a backend without
// AsyncUploader the error wraps tensor.ErrUnsupported.
func (d *Device) NewStager(dst *tensor.Tensor) (Stager, error) {
	up, ok := d.be.(AsyncUploader)
	if !ok {
		return nil, fmt.Errorf("cuda: %s has no asynchronous upload from pinned memory: %w", d.name, tensor.ErrUnsupported)
	}
	ptr, err := d.ptrOf(dst)
	if err != nil {
		return nil, err
	}
	s := &stager{up: up, dst: dst, ptr: ptr, n: dst.Len()}
	if s.n > 0 {
		for i := range s.bufs {
			b := &s.bufs[i]
			if b.host, err = up.AllocPinned(4 * s.n); err == nil {
				b.fence, err = up.NewFence()
			}
			if err != nil {
				err = fmt.Errorf("cuda: pinned staging of %d bytes: %w", 4*s.n, err)
				return nil, errors.Join(err, s.close())
			}
		}
	}
	h := &stagerHandle{s}
	runtime.AddCleanup(h, func(s *stager) { _ = s.close() }, s)
	return h, nil
}

// stagerHandle is what NewStager hands out: the stager's memory is released when the handle is
// unreachable (the cleanup holds the stager, not the handle).
type stagerHandle struct{ *stager }

type stager struct {
	up     AsyncUploader
	dst    *tensor.Tensor // kept alive while copies into it are issued
	ptr    uintptr
	n      int
	bufs   [stagerBuffers]pinnedBuffer
	next   int  // the buffer Host hands out
	handed bool // Host was called since the last Upload
}

// stagerBuffers is the number of pinned buffers a stager rotates through.
const stagerBuffers = 3

type pinnedBuffer struct {
	host    unsafe.Pointer // nil: not allocated
	fence   Fence
	pending bool // a copy from host may not have finished
}

func (s *stager) Host() ([]float32, error) {
	if s.n == 0 {
		s.handed = true
		return []float32{}, nil
	}
	b := &s.bufs[s.next]
	if b.pending {
		if err := b.fence.Wait(); err != nil {
			return nil, fmt.Errorf("cuda: wait for the upload from a staging buffer: %w", err)
		}
		b.pending = false
	}
	s.handed = true
	return unsafe.Slice((*float32)(b.host), s.n), nil
}

func (s *stager) Upload() error {
	if !s.handed {
		return errors.New("cuda: staged upload without Host: the buffer's contents are not this upload's")
	}
	s.handed = false
	if s.n == 0 {
		return nil
	}
	b := &s.bufs[s.next]
	if err := s.up.CopyHtoDAsync(s.ptr, b.host, 4*s.n); err != nil {
		return fmt.Errorf("cuda: upload %d bytes: %w", 4*s.n, err)
	}
	b.pending = true
	if err := b.fence.Record(); err != nil {
		return fmt.Errorf("cuda: fence after an upload: %w", err)
	}
	s.next = (s.next + 1) % len(s.bufs)
	runtime.KeepAlive(s.dst)
	return nil
}

// close waits for the copies still reading the buffers and releases them and their fences.
func (s *stager) close() error {
	var errs []error
	for i := range s.bufs {
		b := &s.bufs[i]
		if b.pending {
			errs = append(errs, b.fence.Wait())
			b.pending = false
		}
		if b.host != nil {
			errs = append(errs, s.up.FreePinned(b.host))
			b.host = nil
		}
		if b.fence != nil {
			errs = append(errs, b.fence.Free())
			b.fence = nil
		}
	}
	return errors.Join(errs...)
}
