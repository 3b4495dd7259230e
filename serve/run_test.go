package serve

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusals: holdctl serve refuses a non-loopback --addr before it loads anything, and a
// checkpoint that does not load before it listens, both as the user's errors (*InputError).
func TestRunRefusals(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Ckpt: missing, Addr: "0.0.0.0:0"}, "give --public"},
		{Options{Ckpt: missing, Addr: "127.0.0.1:0"}, "missing"},
	} {
		err := Run(c.o, false, "test", io.Discard, io.Discard)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an *InputError with %q", c.o, err, c.want)
		}
	}
}
