package experiment

import (
	"strings"
	"testing"
)

// X0Table prints its title and header at once and a row per level, or JSON lines with the stable keys.
func TestX0Table(t *testing.T) {
	var sb strings.Builder
	emit := X0Table(&sb, "x̂₀ of run", false)
	if !strings.HasPrefix(sb.String(), "x̂₀ of run\n         t ") {
		t.Errorf("header:\n%s", sb.String())
	}
	if err := emit(X0Level{T: 0.5, Sigma: 0.25, RMSError: 0.1, Ratio: 0.4, RMS: 0.9, MaxAbs: 1}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(sb.String()), "\n"); len(lines) != 3 || strings.Join(strings.Fields(lines[2]), " ") != "0.5 0.25 0.1 0.4 0.9 1" {
		t.Errorf("table:\n%s", sb.String())
	}
	sb.Reset()
	if err := X0Table(&sb, "ignored", true)(X0Level{T: 1, Sigma: 2}); err != nil {
		t.Fatal(err)
	}
	if want := `{"t":1,"sigma":2,"rms_error":0,"error_over_sigma":0,"rms_x0":0,"max_abs_x0":0}` + "\n"; sb.String() != want {
		t.Errorf("JSON %q, want %q", sb.String(), want)
	}
}
