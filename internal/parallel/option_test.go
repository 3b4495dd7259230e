package parallel

import (
	"runtime"
	"strings"
	"testing"

	"holdgo/internal/cliconf"
)

// TestThreadsOption: --threads is bounded to [0, 256] where it is declared, and Apply sizes the pool
// (0: all cores).
func TestThreadsOption(t *testing.T) {
	defer SetThreads(SetThreads(1))
	for _, c := range []struct {
		n    int
		want int
	}{{3, 3}, {0, runtime.GOMAXPROCS(0)}} {
		ThreadsOption{Threads: c.n}.Apply()
		if got := Threads(); got != c.want {
			t.Errorf("--threads %d: %d threads, want %d", c.n, got, c.want)
		}
	}
	if err := cliconf.Check(ThreadsOption{Threads: 257}); err == nil || !strings.Contains(err.Error(), "--threads") {
		t.Errorf("--threads 257: %v, want a refusal naming --threads", err)
	}
	if err := cliconf.Check(ThreadsOption{Threads: 256}); err != nil {
		t.Errorf("--threads 256: %v", err)
	}
}
