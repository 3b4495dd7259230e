package train

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/internal/runlock"
)

// TestRunExportRefusals: holdctl export's bad input is an ExitError of status 2 that says what is
// wrong, before anything is written: an empty --out, a --out inside a run another process holds the
// lock of, a checkpoint that does not load.
func TestRunExportRefusals(t *testing.T) {
	run := t.TempDir()
	lock, err := runlock.Acquire(run)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, c := range []struct{ ckpt, out, want string }{
		{"x", "", "--out is empty"},
		{"x", filepath.Join(run, "model"), "is writing now (its lock)"},
		{filepath.Join(t.TempDir(), "missing"), filepath.Join(t.TempDir(), "model"), "export: "},
	} {
		err := RunExport(c.ckpt, c.out, false, io.Discard)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Status != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RunExport(%q, %q): %v; want status 2 with %q", c.ckpt, c.out, err, c.want)
		}
	}
}
