package parallel

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// A panic on a goroutine other than main's cannot be recovered by main: Go
// ends the process with exit status 2 and the trace on stderr, which reads
// as "bad input" to holdctl's callers. So every goroutine holdgo starts (the
// pool's workers here, and the ones started with Go) hands a panic to one
// process-wide handler, which holdctl sets to its internal-error report
// (exit status 3, the trace in a file). Without a handler a panic crashes
// the process as Go does by default.

var panicHandler atomic.Pointer[func(r any, stack []byte)]

// SetPanicHandler installs h as the handler of panics on holdgo's goroutines
// (nil removes it). h receives the panic value and the panicking goroutine's
// stack; it should end the process (os.Exit) or the goroutine
// (runtime.Goexit); if it returns, the panic continues.
func SetPanicHandler(h func(r any, stack []byte)) {
	if h == nil {
		panicHandler.Store(nil)
		return
	}
	panicHandler.Store(&h)
}

// guard is deferred at the top of a goroutine: with a handler installed it
// recovers a panic and hands it over; without one it lets the panic crash
// the process unchanged (recover is not called).
func guard() {
	h := panicHandler.Load()
	if h == nil {
		return
	}
	if r := recover(); r != nil {
		(*h)(r, debug.Stack())
		panic(r)
	}
}

// Go runs fn on a new goroutine counted in wg (wg.Add(1) is done here), with
// a panic in fn going to the handler of SetPanicHandler.
func Go(wg *sync.WaitGroup, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer guard()
		fn()
	}()
}
