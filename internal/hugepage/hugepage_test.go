package hugepage

import (
	"math"
	"testing"
)

// TestAdviseKeepsContents: the advice must not change a single element, on
// a buffer written before it (pages already faulted in), a fresh one (Make),
// odd lengths and offsets that do not start on a page, and buffers below
// MinBytes (left alone).
func TestAdviseKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, 1023, MinBytes/4 - 1, MinBytes / 4, MinBytes/4 + 3, 3*MinBytes/4 + 517} {
		s := make([]float32, n+5)
		for i := range s {
			s[i] = float32(i) * 0.5
		}
		for _, off := range []int{0, 1, 5} {
			Advise(s[off : off+n])
			for i, v := range s {
				if v != float32(i)*0.5 {
					t.Fatalf("n=%d off=%d: s[%d] = %v after Advise, want %v", n, off, i, v, float32(i)*0.5)
				}
			}
		}
		m := Make(n)
		if len(m) != n {
			t.Fatalf("Make(%d) has length %d", n, len(m))
		}
		for i, v := range m {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %v, want 0", n, i, v)
			}
			m[i] = float32(math.Sqrt(float64(i)))
		}
		for i, v := range m {
			if v != float32(math.Sqrt(float64(i))) {
				t.Fatalf("Make(%d)[%d] = %v after a write", n, i, v)
			}
		}
	}
}
