package dist

import (
	"math"
	"strings"
	"sync"
	"testing"
)

// onRanks runs body on every rank of a local group of size, concurrently,
// and returns each rank's error.
func onRanks(t *testing.T, size int, body func(c Communicator) error) []error {
	t.Helper()
	comms, err := NewLocal(size)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = body(c)
		}()
	}
	wg.Wait()
	return errs
}

// rankValue is element i of rank r's buffer: distinct, exact in float32.
func rankValue(r, i int) float64 { return float64((r+1)*1000+i%97) / 8 }

// TestLocalAllreduce: every rank ends with the element-wise sum over ranks
// (computed here in float64 from the inputs, exact at these values), for
// lengths that do not split evenly over the ranks, several calls in a row.
func TestLocalAllreduce(t *testing.T) {
	for _, size := range []int{1, 2, 3, 5} {
		for _, n := range []int{0, 1, 2, 7, 1001} {
			errs := onRanks(t, size, func(c Communicator) error {
				for call := range 3 {
					f32 := make([]float32, n)
					f64 := make([]float64, n)
					for i := range n {
						f32[i] = float32(rankValue(c.Rank(), i+call))
						f64[i] = rankValue(c.Rank(), i+call) / 3
					}
					if err := c.AllreduceF32(f32); err != nil {
						return err
					}
					if err := c.AllreduceF64(f64); err != nil {
						return err
					}
					for i := range n {
						var want float64
						for r := range size {
							want += rankValue(r, i+call)
						}
						if float64(f32[i]) != want || !(math.Abs(f64[i]-want/3) <= 1e-12*want) {
							t.Errorf("size %d n %d call %d rank %d [%d]: f32 %v f64 %v, want %v", size, n, call, c.Rank(), i, f32[i], f64[i]*3, want)
							return nil
						}
					}
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Errorf("size %d n %d rank %d: %v", size, n, r, err)
				}
			}
		}
	}
}

// TestLocalBcast: root's buffer reaches every rank, for every root and type.
func TestLocalBcast(t *testing.T) {
	const size = 3
	for root := range size {
		errs := onRanks(t, size, func(c Communicator) error {
			f32, f64, raw := make([]float32, 5), make([]float64, 4), make([]byte, 3)
			if c.Rank() == root {
				for i := range f32 {
					f32[i] = float32(rankValue(root, i))
				}
				for i := range f64 {
					f64[i] = rankValue(root, i) / 7
				}
				copy(raw, "abc")
			}
			if err := c.BcastF32(f32, root); err != nil {
				return err
			}
			if err := c.BcastF64(f64, root); err != nil {
				return err
			}
			if err := c.BcastBytes(raw, root); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			for i := range f32 {
				if float64(f32[i]) != rankValue(root, i) {
					t.Errorf("root %d rank %d: f32[%d] = %v", root, c.Rank(), i, f32[i])
				}
			}
			for i := range f64 {
				if f64[i] != rankValue(root, i)/7 {
					t.Errorf("root %d rank %d: f64[%d] = %v", root, c.Rank(), i, f64[i])
				}
			}
			if string(raw) != "abc" {
				t.Errorf("root %d rank %d: bytes %q", root, c.Rank(), raw)
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Errorf("root %d rank %d: %v", root, r, err)
			}
		}
	}
}

// TestLocalMismatch: ranks that call different collectives, or the same
// one with different lengths, all get an error (none hangs), and the group
// still works afterwards; a root outside the group is an error.
func TestLocalMismatch(t *testing.T) {
	errs := onRanks(t, 3, func(c Communicator) error {
		var err error
		if c.Rank() == 1 {
			err = c.AllreduceF64(make([]float64, 2))
		} else {
			err = c.AllreduceF32(make([]float32, 2))
		}
		if err == nil || !strings.Contains(err.Error(), "calls") {
			t.Errorf("rank %d: different operations: %v", c.Rank(), err)
		}
		if err := c.BcastF32(make([]float32, 2+c.Rank()), 0); err == nil || !strings.Contains(err.Error(), "elements") {
			t.Errorf("rank %d: different lengths: %v", c.Rank(), err)
		}
		if err := c.BcastBytes(nil, 3); err == nil {
			t.Errorf("rank %d: root 3 of 3 accepted", c.Rank())
		}
		buf := []float32{1}
		if err := c.AllreduceF32(buf); err != nil || buf[0] != 3 {
			t.Errorf("rank %d: after the errors: %v, sum %v", c.Rank(), err, buf[0])
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	if _, err := NewLocal(0); err == nil {
		t.Error("NewLocal(0) accepted")
	}
}
