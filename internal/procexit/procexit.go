// Package procexit ends a command's process the same way whatever ends it. A stop signal (Ctrl-C,
// SIGTERM, a closed terminal or pipe) removes the temporary files of writes under way
// (internal/atomicfile) and exits with the signal's conventional status, 128 + its number; a panic,
// on main's goroutine or a worker's (internal/parallel), writes its stack trace to a file and exits
// with Internal after one line that says it is a bug and where the trace is. Commands that handle the
// signals themselves (a training that writes its checkpoint first) call OwnSignals.
package procexit

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"holdgo/internal/atomicfile"
	"holdgo/internal/parallel"
)

// Internal is the exit status of an internal error: a recovered panic, a bug rather than the input.
const Internal = 3

// StopSignals are the catchable signals that end a command: SIGINT (Ctrl-C), SIGTERM, SIGHUP (the
// terminal or ssh session closed), SIGQUIT, and SIGPIPE (stdout or stderr closed under a write).
// Every one of them removes the temporary files of writes under way; train and demo write their
// checkpoint first.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE}

// signals is HandleSignals' channel of StopSignals.
var signals = make(chan os.Signal, 1)

// HandleSignals installs the process's handler of StopSignals: it removes the temporary files of
// writes under way and exits with the signal's conventional status, 128 + its number (130 for
// SIGINT, 143 for SIGTERM, 129 SIGHUP, 131 SIGQUIT, 141 SIGPIPE), saying so on stderr as prog (not
// for SIGPIPE: stderr may be the closed pipe).
func HandleSignals(prog string) {
	signal.Notify(signals, StopSignals...)
	go func() {
		if sig, ok := <-signals; ok {
			atomicfile.RemoveInflight()
			if sig != syscall.SIGPIPE {
				fmt.Fprintf(os.Stderr, "%s: stopped by %v; nothing was left half-written\n", prog, sig)
			}
			os.Exit(SignalStatus(sig))
		}
	}()
}

// OwnSignals hands StopSignals to the command (which has its own signal.Notify of them) and stops
// HandleSignals' handler.
func OwnSignals() { signal.Stop(signals) }

// SignalStatus is the exit status of a process ended by sig: 128 + the signal's number.
func SignalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// ReportPanic writes a recovered panic's trace to a file (prog, its version, the Go release and
// platform first) and says on stderr, in one line, that prog failed (not the input) and where the
// trace is; it removes the temporary files of writes under way and returns Internal.
func ReportPanic(prog, version string, r any, stack []byte) int {
	where := "could not be written"
	if f, err := os.CreateTemp("", prog+"-panic-*.txt"); err == nil {
		fmt.Fprintf(f, "%s %s (%s, %s/%s): panic: %v\n\n%s", prog, version, runtime.Version(), runtime.GOOS, runtime.GOARCH, r, stack)
		if f.Close() == nil {
			where = "is in " + f.Name()
		}
	}
	atomicfile.RemoveInflight()
	msg := strings.ReplaceAll(fmt.Sprint(r), "\n", " ")
	fmt.Fprintf(os.Stderr, "%s: internal error (a bug, not your input): %s; the stack trace %s; please report it (exit status %d)\n", prog, msg, where, Internal)
	return Internal
}

// ReportWorkerPanics makes a panic on a worker goroutine (the parallel pool, sampler and likelihood
// workers, local data-parallel ranks) end the process like one on main's: ReportPanic's line, exit
// status Internal, the trace in a file. (A recover on main's goroutine cannot catch those.)
func ReportWorkerPanics(prog, version string) {
	parallel.SetPanicHandler(func(r any, stack []byte) { os.Exit(ReportPanic(prog, version, r, stack)) })
}
