// Package budget is the one memory budget of a holdctl process: every loader
// of outside bytes and every size flag asks it before allocating, so that a
// small hostile file (a header, a pickle or a zip entry declaring gigabytes)
// is refused with an error instead of exhausting memory.
//
// The limit is set once at start-up (holdctl --max-memory); by default it is
// half of physical memory, and never more than half of the address-space
// limit (ulimit -v) when one is set. A Tracker sums what one load takes, so a
// file's total counts, not each tensor alone.
package budget

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// ErrExceeded is wrapped by every error about a size over the budget.
var ErrExceeded = errors.New("over the memory budget")

// fallback is the default limit where physical memory cannot be read.
const fallback = 4 << 30

var limit atomic.Int64

// Limit returns the budget in bytes.
func Limit() int64 {
	if l := limit.Load(); l > 0 {
		return l
	}
	return Default()
}

// SetLimit sets the budget in bytes (≤ 0: the default).
func SetLimit(n int64) { limit.Store(n) }

// Default is half of physical memory, capped at half the address-space limit.
func Default() int64 {
	d := int64(fallback)
	if m := physicalMemory(); m > 0 {
		d = m / 2
	}
	if as := addressSpaceLimit(); as > 0 && as/2 < d {
		d = as / 2
	}
	return d
}

// Parse reads a size such as 512MiB, 4GiB, 2G, 1.5e9 or 1048576 (bytes).
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mul    float64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
	}
	mul := 1.0
	lower := strings.ToLower(t)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mul, t = u.mul, strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*mul > 1<<62 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes up to 4 EiB, e.g. 512MiB or 4GiB", s)
	}
	n := int64(v * mul)
	if n < 1<<20 {
		return 0, fmt.Errorf("size %q: below the least budget of 1 MiB", s)
	}
	return n, nil
}

// Format writes n bytes for a message (e.g. 1.5 GiB).
func Format(n int64) string {
	switch {
	case n >= 1<<30:
		return digits3(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return digits3(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return digits3(float64(n)/(1<<10)) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

// digits3 writes v with three significant digits, never in exponent form (%.3g wrote 1020 MiB as
// 1.02e+03 MiB).
func digits3(v float64) string {
	if v >= 999.5 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// Tracker sums the bytes one load allocates against the budget.
type Tracker struct {
	what  string
	used  int64
	limit int64
}

// New starts a tracker for what (a path, a data set) with the whole budget.
func New(what string) *Tracker { return &Tracker{what: what, limit: Limit()} }

// Take accounts for n more bytes of item, or returns an error wrapping
// ErrExceeded that names the item, the total and the budget.
func (t *Tracker) Take(n int64, item string) error {
	if n < 0 || n > t.limit-t.used {
		return fmt.Errorf("%s: %s needs %s, which with the %s already taken is %w of %s (raise --max-memory if this file is genuine)",
			t.what, item, describe(n), Format(t.used), ErrExceeded, Format(t.limit))
	}
	t.used += n
	return nil
}

// Used returns the bytes taken so far.
func (t *Tracker) Used() int64 { return t.used }

// Check is Take on a fresh tracker: one allocation of n bytes.
func Check(n int64, what string) error { return New(what).Take(n, "it") }

// CheckCount checks count elements of size bytes each without overflow.
func CheckCount(count, size int64, what string) error {
	if count < 0 || size < 0 || (size > 0 && count > Limit()/size) {
		return fmt.Errorf("%s: %d elements of %d bytes are %w of %s (raise --max-memory if this is genuine)",
			what, count, size, ErrExceeded, Format(Limit()))
	}
	return nil
}

func describe(n int64) string {
	if n < 0 {
		return "an impossible (negative or overflowing) size"
	}
	return Format(n)
}

// ErrNotRegular is wrapped by the errors of Stat and Open for a path that
// is not a regular file (a FIFO, a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// Stat returns the file info of path (following symbolic links) and refuses
// anything but a regular file, before anything opens it: opening a FIFO
// blocks, and /dev/zero never ends.
func Stat(path string) (os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		kind := "a special file"
		switch {
		case st.IsDir():
			kind = "a directory"
		case st.Mode()&os.ModeNamedPipe != 0:
			kind = "a named pipe (FIFO)"
		case st.Mode()&os.ModeDevice != 0:
			kind = "a device"
		case st.Mode()&os.ModeSocket != 0:
			kind = "a socket"
		}
		return nil, fmt.Errorf("%s is %s, %w: give a file", path, kind, ErrNotRegular)
	}
	return st, nil
}

// Open opens a regular file for reading (see Stat).
func Open(path string) (*os.File, os.FileInfo, error) {
	st, err := Stat(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}

// ReadFile reads a whole regular file whose size fits the budget; the bytes
// read never exceed the size found by Stat (a file growing meanwhile is an
// error, not an unbounded read).
func ReadFile(path string) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := Check(st.Size(), path); err != nil {
		return nil, err
	}
	b := make([]byte, 0, st.Size())
	b, err = readAll(f, b, st.Size())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

func readAll(r io.Reader, b []byte, size int64) ([]byte, error) {
	lr := &io.LimitedReader{R: r, N: size + 1}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > size {
			return nil, errors.New("the file grew while it was read")
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// LimitReader returns a reader of at most n bytes that fails (instead of
// ending quietly) when r holds more: an inflating entry that produces more
// than it declared is an error, checked while it inflates.
func LimitReader(r io.Reader, n int64, what string) io.Reader {
	return &strictLimit{r: r, left: n, what: what}
}

type strictLimit struct {
	r    io.Reader
	left int64
	what string
}

func (s *strictLimit) Read(p []byte) (int, error) {
	if s.left <= 0 {
		var one [1]byte
		if n, _ := s.r.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%s inflates to more than it declared", s.what)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}
