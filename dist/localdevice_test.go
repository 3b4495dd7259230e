package dist

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// hostBuf is a Buffer in host memory.
type hostBuf []float32

func (b hostBuf) Len() int { return len(b) }
func (b hostBuf) Read(dst []float32) error {
	copy(dst, b)
	return nil
}
func (b hostBuf) Write(src []float32) error {
	copy(b, src)
	return nil
}

// TestLocalDeviceSums: 2 and 3 ranks start several buckets each (float32 and a
// float64 pair) and wait; every rank ends with the sum in rank order, bit for
// bit the loop r0 + r1 + r2.
func TestLocalDeviceSums(t *testing.T) {
	for _, size := range []int{1, 2, 3} {
		comms, err := NewLocalDevice(size)
		if err != nil {
			t.Fatal(err)
		}
		const buckets, n = 5, 37
		bufs := make([][]hostBuf, size)
		losses := make([]hostBuf, size)
		for r := range size {
			for b := range buckets {
				x := make(hostBuf, n+b)
				for i := range x {
					x[i] = float32(math.Sin(float64(1+r*1000+b*100+i))) * 1e-3 * float32(1+r)
				}
				bufs[r] = append(bufs[r], x)
			}
			losses[r] = make(hostBuf, 2)
			putF64(losses[r], 0.1*float64(r+1))
		}
		want := make([][]float32, buckets)
		for b := range buckets {
			want[b] = make([]float32, n+b)
			for i := range want[b] {
				s := bufs[0][b][i]
				for r := 1; r < size; r++ {
					s += bufs[r][b][i]
				}
				want[b][i] = s
			}
		}
		wantLoss := 0.0
		for r := range size {
			wantLoss += 0.1 * float64(r+1)
		}
		var wg sync.WaitGroup
		errs := make([]error, size)
		for r := range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := buckets - 1; b >= 0; b-- { // any order, the same on every rank
					if err := comms[r].StartAllreduce(bufs[r][b], F32); err != nil {
						errs[r] = err
						return
					}
				}
				if err := comms[r].StartAllreduce(losses[r], F64); err != nil {
					errs[r] = err
					return
				}
				errs[r] = comms[r].Wait()
			}()
		}
		wg.Wait()
		for r := range size {
			if errs[r] != nil {
				t.Fatalf("%d ranks, rank %d: %v", size, r, errs[r])
			}
			for b := range buckets {
				for i, v := range bufs[r][b] {
					if math.Float32bits(v) != math.Float32bits(want[b][i]) {
						t.Fatalf("%d ranks, rank %d, bucket %d, element %d: %v, want %v", size, r, b, i, v, want[b][i])
					}
				}
			}
			if got := getF64(losses[r]); got != wantLoss {
				t.Errorf("%d ranks, rank %d: loss %v, want %v", size, r, got, wantLoss)
			}
			if err := comms[r].Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestLocalDeviceMismatch: ranks that start buffers of different lengths get
// the same error on every rank.
func TestLocalDeviceMismatch(t *testing.T) {
	comms, _ := NewLocalDevice(2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = comms[r].StartAllreduce(make(hostBuf, 4+r), F32)
			errs[r] = comms[r].Wait()
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error for buffers of 4 and 5 elements", r)
		}
	}
}

// TestLocalDeviceFail: rank 2 of 3 fails instead of starting its bucket; the
// others, waiting in the reduction, return an error naming rank 2 (wrapping
// ErrPeer) at once, and so do their later reductions.
func TestLocalDeviceFail(t *testing.T) {
	comms, _ := NewLocalDevice(3)
	injected := errors.New("injected failure")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r == 2 {
				time.Sleep(20 * time.Millisecond)
				comms[r].Fail(injected)
				return
			}
			start := time.Now()
			_ = comms[r].StartAllreduce(make(hostBuf, 8), F32)
			errs[r] = comms[r].Wait()
			took[r] = time.Since(start)
		}()
	}
	wg.Wait()
	for r := range 2 {
		var pe *PeerError
		if !errors.Is(errs[r], ErrPeer) || !errors.As(errs[r], &pe) || pe.Rank != 2 || !errors.Is(pe.Err, injected) {
			t.Errorf("rank %d: %v, want a PeerError of rank 2", r, errs[r])
		}
		if took[r] > 2*time.Second {
			t.Errorf("rank %d stopped %v after the failure", r, took[r])
		}
		if err := comms[r].StartAllreduce(make(hostBuf, 8), F32); err != nil {
			t.Fatal(err)
		}
		if err := comms[r].Wait(); !errors.Is(err, ErrPeer) {
			t.Errorf("rank %d: a reduction after the failure gave %v", r, err)
		}
		t.Logf("rank %d stopped %v after starting its reduction: %v", r, took[r], errs[r])
	}
}
