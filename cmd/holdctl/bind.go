package main

// Commands' settings as tagged struct fields (internal/cliconf), made into flags and bound back by
// internal/clibind: withConfig is clibind.WithConfig with holdctl's refusal (exit status 2).

import (
	"github.com/urfave/cli/v2"

	"holdgo/internal/clibind"
)

// withConfig declares the tagged fields of each of cfgs (pointers to structs holding the defaults)
// as cmd's flags, ahead of its own, and, before cmd's action runs, fills them from the flags given,
// refusing (exit status 2) a value outside a field's bounds. The action then reads the structs.
func withConfig(cmd *cli.Command, cfgs ...any) *cli.Command {
	return clibind.WithConfig(cmd, func(err error) error { return usageErr("%v", err) }, cfgs...)
}

// checkOnly stops every command after its flags are parsed, bound and checked, before its action
// runs (for the test that walks every numeric flag: a legal value does no work).
var checkOnly bool
