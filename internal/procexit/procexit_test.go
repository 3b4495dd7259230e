package procexit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSignalStatus(t *testing.T) {
	for sig, want := range map[os.Signal]int{os.Interrupt: 130, syscall.SIGTERM: 143, syscall.SIGHUP: 129, syscall.SIGQUIT: 131, syscall.SIGPIPE: 141} {
		if got := SignalStatus(sig); got != want {
			t.Errorf("SignalStatus(%v) = %d, want %d", sig, got, want)
		}
	}
}

// ReportPanic returns Internal and leaves the trace, headed by the program and its version, in a file.
func TestReportPanic(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if got := ReportPanic("prog", "1.2", "boom", []byte("the stack")); got != Internal {
		t.Fatalf("ReportPanic = %d, want %d", got, Internal)
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "prog-panic-*.txt"))
	if len(files) != 1 {
		t.Fatalf("trace files %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.HasPrefix(s, "prog 1.2 (") || !strings.Contains(s, "panic: boom\n\nthe stack") {
		t.Errorf("trace file:\n%s", s)
	}
}
