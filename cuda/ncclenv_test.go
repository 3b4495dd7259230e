package cuda

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestPinNCCL: strict precision sets NCCL_ALGO=Ring, NCCL_PROTO=Simple and
// NCCL_NVLS_ENABLE=0 unless the user set them (theirs win and are recorded as
// theirs); without strict nothing is set; the record names the version and
// every setting with its source.
func TestPinNCCL(t *testing.T) {
	for _, c := range []struct {
		strict bool
		env    map[string]string
		set    []string // the variables PinNCCL sets, in order
		meta   map[string]string
		line   string
	}{
		{strict: true, set: []string{"NCCL_ALGO=Ring", "NCCL_PROTO=Simple", "NCCL_NVLS_ENABLE=0"},
			meta: map[string]string{"nccl_version": "2.21.5", "nccl_algo": "Ring (strict)", "nccl_proto": "Simple (strict)", "nccl_nvls_enable": "0 (strict)"},
			line: "NCCL 2.21.5, NCCL_ALGO=Ring (strict), NCCL_PROTO=Simple (strict), NCCL_NVLS_ENABLE=0 (strict)"},
		{strict: true, env: map[string]string{"NCCL_ALGO": "Tree", "NCCL_NVLS_ENABLE": "0"}, set: []string{"NCCL_PROTO=Simple"},
			meta: map[string]string{"nccl_version": "2.21.5", "nccl_algo": "Tree (user)", "nccl_proto": "Simple (strict)", "nccl_nvls_enable": "0 (user)"},
			line: "NCCL 2.21.5, NCCL_ALGO=Tree (user), NCCL_PROTO=Simple (strict), NCCL_NVLS_ENABLE=0 (user)"},
		{strict: false, env: map[string]string{"NCCL_PROTO": "LL128"},
			meta: map[string]string{"nccl_version": "2.21.5", "nccl_algo": "default", "nccl_proto": "LL128 (user)", "nccl_nvls_enable": "default"},
			line: "NCCL 2.21.5, NCCL_ALGO unset (NCCL's default), NCCL_PROTO=LL128 (user), NCCL_NVLS_ENABLE unset (NCCL's default)"},
	} {
		var set []string
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		settings, err := PinNCCL(c.strict, lookup, func(k, v string) error { set = append(set, k+"="+v); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(set, c.set) {
			t.Errorf("strict %v, env %v: set %v, want %v", c.strict, c.env, set, c.set)
		}
		rec := NCCLRecord{Version: "2.21.5", Settings: settings}
		if got := rec.Meta(); !maps.Equal(got, c.meta) {
			t.Errorf("strict %v, env %v: meta %v, want %v", c.strict, c.env, got, c.meta)
		}
		if got := rec.String(); got != c.line {
			t.Errorf("strict %v, env %v: %q, want %q", c.strict, c.env, got, c.line)
		}
	}
	_, err := PinNCCL(true, func(string) (string, bool) { return "", false }, func(string, string) error { return errors.New("invalid argument") })
	if err == nil || !strings.Contains(err.Error(), "NCCL_ALGO=Ring") {
		t.Errorf("setenv failing: %v, want an error naming NCCL_ALGO=Ring", err)
	}
}
