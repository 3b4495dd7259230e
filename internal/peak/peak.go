// Package peak measures the arithmetic peak of this machine's cores: a loop
// of independent FMA chains that never leaves the registers (fma_amd64.s), one
// per instruction-set level of internal/isa, run on one or more threads. It is
// the ceiling that holdctl bench's GFLOP/s are compared with: a kernel at
// 100 % of it does nothing but FMAs on every port of every core.
package peak

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"holdgo/internal/isa"
)

// loop is one level's FMA loop: run does iters iterations of flopsPerIter
// FLOPs and returns chains·iters (the sum of its chains' lane 0).
type loop struct {
	level        string
	chains       int
	flopsPerIter float64
	run          func(iters int) float32
}

// genericOne is 1, read from a variable so that the compiler cannot fold
// the generic loop away.
var genericOne float32 = 1

// fmaGeneric is the plain-Go loop: 12 independent scalar chains of a
// multiply and an add (the Go compiler does not fuse them on amd64), the
// arithmetic the generic kernels have to work with. Twelve chains and the
// constant fill 13 of the 15 XMM registers Go's register ABI leaves (X15 is
// its zero register); 8 chains measured 9.5 GFLOP/s where 12 give more,
// because a multiply and an add in a row take 6 cycles of latency.
func fmaGeneric(iters int) float32 {
	one := genericOne
	var a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11 float32
	for range iters {
		a0 = a0*one + one
		a1 = a1*one + one
		a2 = a2*one + one
		a3 = a3*one + one
		a4 = a4*one + one
		a5 = a5*one + one
		a6 = a6*one + one
		a7 = a7*one + one
		a8 = a8*one + one
		a9 = a9*one + one
		a10 = a10*one + one
		a11 = a11*one + one
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11
}

var loops = append(archLoops[:len(archLoops):len(archLoops)],
	loop{level: isa.Generic, chains: 12, flopsPerIter: 12 * 2, run: fmaGeneric})

// find returns the loop of level, or an error where this machine or build
// does not run it.
func find(level string) (loop, error) {
	if !isa.Supported(level) {
		return loop{}, fmt.Errorf("instruction set %q not supported here (have %v)", level, isa.Levels())
	}
	for _, l := range loops {
		if l.level == level {
			return l, nil
		}
	}
	return loop{}, fmt.Errorf("no FMA loop for instruction set %q", level)
}

// Run runs the loop of level for iters iterations on the calling goroutine
// and returns the FLOPs it did and its check value, chains·iters in float32
// (exact while below 2^24).
func Run(level string, iters int) (flops float64, check float32, err error) {
	l, err := find(level)
	if err != nil {
		return 0, 0, err
	}
	return float64(iters) * l.flopsPerIter, l.run(iters), nil
}

// Chains reports how many independent chains the loop of level runs (the
// expected check value of Run is chains·iters).
func Chains(level string) (int, error) {
	l, err := find(level)
	return l.chains, err
}

// Windows is how many windows FMA splits its time into; it reports the best.
const Windows = 5

// FMA runs the loop of level on threads goroutines at once, each locked to
// its own OS thread, for Windows windows of about d/Windows each, and
// returns the best window's rate in GFLOP/s (all threads together: the FLOPs
// done over the time from the common start to the last thread's end). The
// best, not the median, because a peak is a ceiling: another process's time
// slices only lower a window. A level this machine or build does not run is
// an error.
func FMA(level string, threads int, d time.Duration) (float64, error) {
	l, err := find(level)
	if err != nil {
		return 0, err
	}
	if threads < 1 {
		return 0, fmt.Errorf("peak: %d threads", threads)
	}
	iters := calibrate(l, 200*time.Microsecond)
	window := max(d/Windows, time.Millisecond)
	best := 0.0
	for range Windows {
		best = max(best, runWindow(l, iters, threads, window))
	}
	return best, nil
}

// calibrate returns the iteration count of one call of l that takes about
// target on this core.
func calibrate(l loop, target time.Duration) int {
	iters := 256
	for {
		start := time.Now()
		l.run(iters)
		el := time.Since(start)
		if el >= target/4 || iters >= 1<<30 {
			return max(1, int(float64(iters)*float64(target)/float64(max(el, 1))))
		}
		iters *= 4
	}
}

// runWindow runs l on threads locked goroutines, calls of iters iterations
// each until window has passed since their common start, and returns the
// rate in GFLOP/s.
func runWindow(l loop, iters, threads int, window time.Duration) float64 {
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	start := make(chan struct{})
	calls := make([]int, threads)
	ends := make([]time.Time, threads)
	var t0 time.Time
	for i := range threads {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-start
			for {
				l.run(iters)
				calls[i]++
				if now := time.Now(); now.Sub(t0) >= window {
					ends[i] = now
					return
				}
			}
		}()
	}
	ready.Wait()
	t0 = time.Now()
	close(start)
	wg.Wait()
	total, last := 0, t0
	for i := range threads {
		total += calls[i]
		if ends[i].After(last) {
			last = ends[i]
		}
	}
	return float64(total) * float64(iters) * l.flopsPerIter / last.Sub(t0).Seconds() / 1e9
}
