package parallel

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGoHandsPanicToHandler: a panic on a goroutine started with Go reaches
// the handler with its value and the panicking goroutine's stack, and the
// WaitGroup is still released.
func TestGoHandsPanicToHandler(t *testing.T) {
	var got any
	var stack []byte
	SetPanicHandler(func(r any, s []byte) { got, stack = r, s; runtime.Goexit() })
	defer SetPanicHandler(nil)
	var wg sync.WaitGroup
	Go(&wg, func() { panicHere("boom") })
	wg.Wait()
	if got != "boom" {
		t.Fatalf("handler got %v, want boom", got)
	}
	if !bytes.Contains(stack, []byte("panicHere")) {
		t.Fatalf("stack does not show the panicking function:\n%s", stack)
	}
}

func panicHere(v any) { panic(v) }

// TestWorkerPanicReachesHandler: a panic inside a parallel.For chunk that
// runs on one of the pool's workers (not on For's caller) reaches the
// handler, which here ends the process with status 3. Without the handler
// Go would end it with status 2 and no chance to report. Run in a child
// process, since the handler exits.
func TestWorkerPanicReachesHandler(t *testing.T) {
	if os.Getenv("HOLDGO_PARALLEL_PANIC_CHILD") == "1" {
		SetPanicHandler(func(r any, _ []byte) {
			os.Stderr.WriteString("handled: " + r.(string) + "\n")
			os.Exit(3)
		})
		SetThreads(2)
		caller := goid()
		For(64, 1, func(lo, hi int) {
			if goid() != caller {
				panic("worker chunk")
			}
			time.Sleep(time.Hour) // the caller waits in its chunk until a worker panics
		})
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerPanicReachesHandler$")
	cmd.Env = append(os.Environ(), "HOLDGO_PARALLEL_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "handled: worker chunk") {
		t.Fatalf("child: err %v, output:\n%s\nwant exit status 3 and the handler's line", err, out)
	}
}

// goid is the current goroutine's id, read from its stack header
// ("goroutine 7 [running]:").
func goid() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	f := strings.Fields(string(b))
	return f[1]
}
