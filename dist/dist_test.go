package dist

import (
	"strings"
	"testing"
)

func TestSingle(t *testing.T) {
	var c Communicator = Single{}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("rank %d size %d, want 0 of 1", c.Rank(), c.Size())
	}
	f32, f64, b := []float32{1, -2, 3}, []float64{0.5, 7}, []byte("abc")
	for name, err := range map[string]error{
		"allreduce f32": c.AllreduceF32(f32), "allreduce f64": c.AllreduceF64(f64),
		"bcast f32": c.BcastF32(f32, 0), "bcast f64": c.BcastF64(f64, 0), "bcast bytes": c.BcastBytes(b, 0),
		"barrier": c.Barrier(), "finalize": c.Finalize(),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if f32[1] != -2 || f64[1] != 7 || string(b) != "abc" {
		t.Errorf("one rank changed its buffers: %v %v %q", f32, f64, b)
	}
	if err := c.BcastF32(f32, 1); err == nil {
		t.Error("broadcast from root 1 of 1 rank: no error")
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ global, size int }{{96, 1}, {96, 2}, {96, 3}, {4, 2}, {4, 4}, {17, 17}} {
		next := 0
		for r := range tc.size {
			first, n, err := Split(tc.global, r, tc.size)
			if err != nil {
				t.Fatalf("Split(%d, %d, %d): %v", tc.global, r, tc.size, err)
			}
			if first != next || n != tc.global/tc.size {
				t.Fatalf("Split(%d, %d, %d) = %d, %d; want %d, %d", tc.global, r, tc.size, first, n, next, tc.global/tc.size)
			}
			next += n
		}
		if next != tc.global {
			t.Fatalf("Split(%d, ·, %d) covers %d samples", tc.global, tc.size, next)
		}
	}
	for _, tc := range []struct{ global, rank, size int }{{97, 0, 2}, {2, 0, 3}, {4, 2, 2}, {4, -1, 2}, {4, 0, 0}} {
		if _, _, err := Split(tc.global, tc.rank, tc.size); err == nil {
			t.Errorf("Split(%d, %d, %d): no error", tc.global, tc.rank, tc.size)
		}
	}
	if _, _, err := Split(97, 0, 2); !strings.Contains(err.Error(), "multiple of 2") {
		t.Errorf("uneven split message %q does not say what to do", err)
	}
}
