package clibind

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/internal/budget"
)

// Setup is what SetUp gives the commands of an app.
type Setup struct {
	// OnUsageError is given to every command and subcommand that has none (urfave/cli applies the
	// app's handler to top-level flags only).
	OnUsageError cli.OnUsageErrorFunc
	Refused      func(error) error // what a refused value or argument becomes (cmd/holdctl: exit status 2)
	Args         func() []string   // the arguments the app parses (DecimalInts)
	// Ready runs before every action once the shared flags are checked; with run false the action
	// does not run (a test that only checks the flags).
	Ready func() (run bool)
}

// SetUp gives every command of cmds and their subcommands s.OnUsageError, and every command that
// runs (not the groups) what all of them share: --max-memory, the memory budget every loader and size
// flag consults (internal/budget); integers written only in decimal (DecimalInts, before any bound is
// checked: --n -010 is not read as -8); no arguments where the command takes none; the required flags
// of OptionalRequired; then s.Ready.
func SetUp(cmds []*cli.Command, s Setup) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = s.OnUsageError
		}
		SetUp(c.Subcommands, s)
		if len(c.Subcommands) > 0 || c.Action == nil {
			continue
		}
		c.Flags = append(c.Flags, &cli.StringFlag{Name: "max-memory",
			Usage: "memory budget for what inputs and size flags may allocate, e.g. 2GiB (default: half of physical memory, at most half of ulimit -v)"})
		required := OptionalRequired(c.Flags)
		before := c.Before
		c.Before = func(ctx *cli.Context) error {
			if err := DecimalInts(ctx.Command.Flags, s.Args()); err != nil {
				return s.Refused(err)
			}
			if before != nil {
				return before(ctx)
			}
			return nil
		}
		action := c.Action
		c.Action = func(ctx *cli.Context) error {
			if v := ctx.String("max-memory"); v != "" {
				n, err := budget.Parse(v)
				if err != nil {
					return s.Refused(fmt.Errorf("--max-memory: %v", err))
				}
				budget.SetLimit(n)
			}
			app := ctx.App.Name
			cmd := strings.TrimPrefix(ctx.Command.HelpName, app+" ") // "plot loss"
			if ctx.Command.ArgsUsage == "" && ctx.Args().Present() {
				return s.Refused(fmt.Errorf("%s takes no arguments, got %q (flags go before arguments)", cmd, ctx.Args().First()))
			}
			for _, name := range required {
				if !ctx.IsSet(name) {
					return s.Refused(fmt.Errorf("%s needs --%s (see '%s %s --help')", cmd, name, app, cmd))
				}
			}
			if s.Ready != nil && !s.Ready() {
				return nil
			}
			return action(ctx)
		}
	}
}
