package cuda

import (
	"fmt"
	"strings"
)

// NCCL reads its settings from the environment once, in ncclCommInitRank. Its
// default algorithm and protocol depend on the machine (ring or tree, NVLS on
// NVSwitch, the LL/LL128 protocols, chosen per message size), and each sums
// the ranks' buffers in another order. Strict precision (the device's
// StrictFP32, the run that reproduces bit for bit on the same GPUs) pins one:
// rings with the simple protocol, no NVLS, set before the communicator is made.

// NCCLStrictEnv are the settings strict precision pins, in the order they are set.
var NCCLStrictEnv = []NCCLSetting{
	{Name: "NCCL_ALGO", Value: "Ring"},
	{Name: "NCCL_PROTO", Value: "Simple"},
	{Name: "NCCL_NVLS_ENABLE", Value: "0"},
}

// NCCLSetting is one NCCL environment variable and where its value came from.
type NCCLSetting struct {
	Name, Value string
	// Source is "user" (the environment had it), "strict" (PinNCCL set it)
	// or "default" (unset: NCCL chooses).
	Source string
}

// PinNCCL sets NCCLStrictEnv through setenv (os.Setenv), before the NCCL
// communicator is made, when strict is true, except the variables lookup
// (os.LookupEnv) finds: the user's value wins and is recorded as theirs. It
// returns every variable of NCCLStrictEnv with its value in force, for the
// run's record (NCCLRecord); without strict it sets nothing.
func PinNCCL(strict bool, lookup func(string) (string, bool), setenv func(key, value string) error) ([]NCCLSetting, error) {
	out := make([]NCCLSetting, 0, len(NCCLStrictEnv))
	for _, s := range NCCLStrictEnv {
		switch v, ok := lookup(s.Name); {
		case ok:
			out = append(out, NCCLSetting{Name: s.Name, Value: v, Source: "user"})
		case strict:
			if err := setenv(s.Name, s.Value); err != nil {
				return nil, fmt.Errorf("cuda: set %s=%s for strict precision: %w", s.Name, s.Value, err)
			}
			out = append(out, NCCLSetting{Name: s.Name, Value: s.Value, Source: "strict"})
		default:
			out = append(out, NCCLSetting{Name: s.Name, Source: "default"})
		}
	}
	return out, nil
}

// NCCLRecord is what a run records of its NCCL: the version (NCCLInfo's
// library, "2.21.5") and the settings in force (PinNCCL).
type NCCLRecord struct {
	Version  string
	Settings []NCCLSetting
}

// Meta is the record as checkpoint and log metadata: nccl_version and one
// key per setting in lower case (nccl_algo: "Ring (strict)", nccl_proto:
// "default").
func (r NCCLRecord) Meta() map[string]string {
	m := map[string]string{"nccl_version": r.Version}
	for _, s := range r.Settings {
		m[strings.ToLower(s.Name)] = s.describe()
	}
	return m
}

// String is the record as one log line: "NCCL 2.21.5, NCCL_ALGO=Ring
// (strict), NCCL_PROTO=Simple (strict), NCCL_NVLS_ENABLE=0 (user)".
func (r NCCLRecord) String() string {
	parts := []string{"NCCL " + r.Version}
	for _, s := range r.Settings {
		if s.Source == "default" {
			parts = append(parts, s.Name+" unset (NCCL's default)")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", s.Name, s.Value, s.Source))
	}
	return strings.Join(parts, ", ")
}

func (s NCCLSetting) describe() string {
	if s.Source == "default" {
		return "default"
	}
	return fmt.Sprintf("%s (%s)", s.Value, s.Source)
}
