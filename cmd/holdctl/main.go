// Command holdctl trains, samples and inspects HOLD diffusion models.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/urfave/cli/v2"

	"holdgo/internal/isa"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func newApp() *cli.App {
	app := &cli.App{
		Name:    "holdctl",
		Usage:   "train, sample and inspect HOLD diffusion models (third-order Langevin dynamics)",
		Version: version,
		Description: "holdgo is a pure-Go deep-learning stack for HOLD-DGM and its CLD, VP and VE peers.\n" +
			"Run 'holdctl COMMAND --help' for a command's flags.",
		Commands: []*cli.Command{
			demoCommand(),
			trainCommand(),
			sampleCommand(),
			evalCommand(),
			nllCommand(),
			plotCommand(),
			experimentCommand(),
			modelCommand(),
			sdeCommand(),
			benchCommand(),
			classifierCommand(),
			fidCommand(),
			exportCommand(),
			deviceCommand(),
			versionCommand(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Exit(fmt.Sprintf("holdctl: unknown command %q (see 'holdctl --help')", c.Args().First()), 2)
			}
			return cli.ShowAppHelp(c)
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cli.Exit(fmt.Sprintf("holdctl: %v (see '%s --help')", err, c.Command.FullName()), 2)
		},
		ExitErrHandler: func(*cli.Context, error) {}, // main reports errors and picks the status
	}
	setUsageErrors(app.Commands, app.OnUsageError)
	return app
}

// setUsageErrors gives every command and subcommand the app's usage-error handler (exit status 2):
// urfave/cli applies the app's handler to top-level flags only.
func setUsageErrors(cmds []*cli.Command, h cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = h
		}
		setUsageErrors(c.Subcommands, h)
	}
}

func experimentCommand() *cli.Command {
	return &cli.Command{
		Name:        "experiment",
		Usage:       "reproducible studies: sampler accuracy against NFE",
		Subcommands: []*cli.Command{experimentSamplersCommand(), experimentNFECommand()},
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, Go release and CPU features in use",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "holdctl %s (%s, %s/%s)\nCPU kernels: %s (supported: %v; HOLDGO_ISA forces one)\n",
				version, runtime.Version(), runtime.GOOS, runtime.GOARCH, isa.Level(), isa.Levels())
			return nil
		},
	}
}

// run executes the CLI and returns the process exit status: 0 on success,
// the status of a cli.ExitCoder, 2 for usage errors and 1 otherwise.
func run(args []string) int {
	err := newApp().Run(args)
	if err == nil {
		return 0
	}
	if msg := err.Error(); msg != "" { // data-parallel ranks other than 0 end quietly (train_dist.go)
		fmt.Fprintln(os.Stderr, msg)
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

func main() { os.Exit(run(os.Args)) }
