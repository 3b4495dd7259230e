package imagedata

import (
	"fmt"
	"math/bits"

	"holdgo/internal/budget"
)

// Caps on what a reader accepts from outside bytes. A header states sizes
// the reader must allocate; these bound them before anything is allocated,
// so a 16-byte file cannot ask for exabytes (or, by wrapping the product,
// for nothing at all).
const (
	// MaxBytes is the most pixel bytes a data set may hold (8 GiB).
	MaxBytes = 8 << 30
	// MaxSide is the largest image side accepted (pixels).
	MaxSide = 1 << 14
)

// shapeSize returns the product of dims, which must each be ≥ 1, computed
// without overflow and capped at MaxBytes; the error names the dimensions
// and the cap.
func shapeSize(dims []int) (int, error) {
	size := uint64(1)
	for _, d := range dims {
		if d < 1 {
			return 0, fmt.Errorf("dimensions %v: a zero dimension holds no images", dims)
		}
		hi, lo := bits.Mul64(size, uint64(d))
		if hi != 0 || lo > MaxBytes {
			return 0, fmt.Errorf("dimensions %v hold more than %d bytes (the cap of %d GiB)", dims, uint64(MaxBytes), MaxBytes>>30)
		}
		if lo > uint64(budget.Limit()) {
			return 0, fmt.Errorf("dimensions %v hold %d bytes, %w of %s (raise --max-memory if this data set is genuine)", dims, lo, budget.ErrExceeded, budget.Format(budget.Limit()))
		}
		size = lo
	}
	return int(size), nil
}
