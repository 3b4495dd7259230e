package cuda

import "testing"

func TestOverlap(t *testing.T) {
	const base = 0x1000
	for _, c := range []struct {
		name       string
		shape      []int
		src, dst   []int
		dstOff     int
		wantOverlp bool
	}{
		{"same buffer", []int{2, 3}, []int{3, 1}, []int{3, 1}, 0, true},
		{"adjacent", []int{2, 3}, []int{3, 1}, []int{3, 1}, 6, false},
		{"one element in", []int{2, 3}, []int{3, 1}, []int{3, 1}, 5, true},
		{"transposed read, after", []int{3, 2}, []int{1, 3}, []int{2, 1}, 6, false},
		{"broadcast source", []int{4, 3}, []int{0, 1}, []int{3, 1}, 3, false},
		{"broadcast source inside", []int{4, 3}, []int{0, 1}, []int{3, 1}, -6, true},
	} {
		_, _, got := overlap(c.shape, c.src, c.dst, base, at(base, c.dstOff))
		if got != c.wantOverlp {
			t.Errorf("%s: overlap %v, want %v", c.name, got, c.wantOverlp)
		}
	}
}

// ptr64 refuses a double* that is not 8-byte aligned, and launch reports it.
func TestPtr64Alignment(t *testing.T) {
	if a := new(args).ptr64(0x1008); a.err != nil {
		t.Errorf("aligned: %v", a.err)
	}
	if a := new(args).i32(1).ptr64(0x1004); a.err == nil {
		t.Error("misaligned double* accepted")
	}
}
