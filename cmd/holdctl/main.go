// Command holdctl trains, samples and inspects HOLD diffusion models.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
	"holdgo/internal/clibind"
	"holdgo/internal/procexit"
	"holdgo/tensor"
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
			restoreCommand(),
			serveCommand(),
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
	// Every command gets the app's usage-error handler and the flags and checks all of them share
	// (clibind.SetUp: --max-memory, decimal integers, no stray arguments, the required flags).
	clibind.SetUp(app.Commands, clibind.Setup{OnUsageError: app.OnUsageError,
		Refused: func(err error) error { return usageErr("%v", err) },
		Args:    func() []string { return cliArgs },
		Ready: func() bool {
			// The transformed weights a frozen network keeps (tensor.Freeze) take at most a quarter
			// of the budget, 2 GiB at most (ncsnpp-cifar10's take 1.6 GiB); past it they are made
			// on every call.
			tensor.FrozenBudget.Store(min(2<<30, budget.Limit()/4))
			return !checkOnly
		}})
	return app
}

func experimentCommand() *cli.Command {
	return &cli.Command{
		Name:        "experiment",
		Usage:       "reproducible studies: sampler accuracy against NFE, restoration",
		Subcommands: []*cli.Command{experimentSamplersCommand(), experimentNFECommand(), experimentRestoreCommand()},
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, Go release and CPU features in use",
		Action: func(c *cli.Context) error {
			level, supported := tensor.CPUKernels()
			fmt.Fprintf(c.App.Writer, "holdctl %s (%s, %s/%s)\nCPU kernels: %s (supported: %v; HOLDGO_ISA forces one)\n",
				version, runtime.Version(), runtime.GOOS, runtime.GOARCH, level, supported)
			return nil
		},
	}
}

// Exit statuses: 0 success, 1 a failure at run time, 2 bad input (usage,
// files, flags), 3 an internal error (a bug: a recovered panic), 130 an
// interrupted training that wrote its checkpoint; a stop signal's 128 + its
// number (internal/procexit).
const exitInternal = procexit.Internal

// cliArgs are the arguments run parses, for clibind.DecimalInts (urfave/cli keeps no raw flag values).
var cliArgs []string

// run executes the CLI and returns the process exit status: 0 on success,
// the status of a cli.ExitCoder, 2 for usage errors, 3 for an internal
// error and 1 otherwise.
func run(args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			code = procexit.ReportPanic("holdctl", version, r, debug.Stack())
		}
	}()
	code, msg := runApp(args)
	if msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	return code
}

// runApp runs the CLI on args and returns the exit status and the one line to write to stderr ("" for
// none).
func runApp(args []string) (int, string) {
	cliArgs = args
	err := newApp().Run(args)
	if err == nil {
		return 0, ""
	}
	if errors.Is(err, syscall.EPIPE) { // stdout closed under a write: SIGPIPE's status, whichever came first
		atomicfile.RemoveInflight()
		return procexit.SignalStatus(syscall.SIGPIPE), ""
	}
	// One line, whatever the error joined (errors.Join, a quoted CSV field); data-parallel ranks other
	// than 0 end quietly (an empty message, train_dist.go).
	msg := strings.ReplaceAll(strings.TrimRight(err.Error(), "\n"), "\n", "; ")
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode(), msg
	}
	return 1, msg
}

func main() {
	procexit.HandleSignals("holdctl")
	procexit.ReportWorkerPanics("holdctl", version)
	os.Exit(run(os.Args))
}
