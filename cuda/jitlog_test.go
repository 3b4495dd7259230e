package cuda

import (
	"errors"
	"strings"
	"testing"
)

// A PTX load failure carries the JIT's log (cut at the C string's NUL), and still wraps the
// driver's error.
func TestWithJITLog(t *testing.T) {
	base := errors.New("CUDA_ERROR_INVALID_PTX")
	buf := append([]byte("ptxas application ptx input, line 7; error   : Unknown symbol\n"), 0, '#', '#') // '#': stale bytes past the NUL
	err := withJITLog(base, buf)
	if !errors.Is(err, base) || !strings.Contains(err.Error(), "JIT log:\nptxas application ptx input, line 7") || strings.Contains(err.Error(), "#") {
		t.Errorf("got %q", err)
	}
	if err := withJITLog(base, make([]byte, 16)); !errors.Is(err, base) || !strings.Contains(err.Error(), "no log") {
		t.Errorf("empty log: %q", err)
	}
}
