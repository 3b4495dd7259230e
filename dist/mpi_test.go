//go:build mpi

package dist

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The tests start mpirun on this test binary; the binary started so (the
// worker variable set) runs one worker role instead of the tests.
const workerVar = "HOLDGO_DIST_WORKER"

func TestMain(m *testing.M) {
	if role := os.Getenv(workerVar); role != "" {
		if err := worker(role); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mpirun runs this binary as np ranks of role and returns its error and
// how long it took.
func mpirun(t *testing.T, np int, role string) ([]byte, error, time.Duration) {
	t.Helper()
	path, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (Debian: apt-get install openmpi-bin): %v", err)
	}
	cmd := exec.Command(path, "--oversubscribe", "--allow-run-as-root", "-np", fmt.Sprint(np), os.Args[0])
	cmd.Env = append(os.Environ(), workerVar+"="+role)
	start := time.Now()
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("mpirun -np %d %s hung for 2 minutes:\n%s", np, role, out)
	}
	return out, err, time.Since(start)
}

func worker(role string) error {
	c, err := Open()
	if err != nil {
		return err
	}
	if _, ok := c.(*MPI); !ok {
		return fmt.Errorf("Open under mpirun gave %T, not *MPI", c)
	}
	switch role {
	case "collectives":
		if err := collectives(c); err != nil {
			return err
		}
		maxCount = 7 // the same again in chunks of 7 elements
		if err := collectives(c); err != nil {
			return fmt.Errorf("in chunks: %w", err)
		}
	case "timing":
		return timing(c)
	case "abort":
		if c.Rank() == 1 {
			c.Abort(3, "test abort")
		}
		c.Barrier() // never completes: rank 1 is gone
		return errors.New("barrier returned after a peer aborted")
	case "sigkill":
		if c.Rank() == 1 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		c.Barrier()
		return errors.New("barrier returned after a peer was killed")
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	return c.Finalize()
}

// collectives checks every call of c against sums computed here: rank r
// contributes small integers, so every float sum is exact.
func collectives(c Communicator) error {
	r, n := c.Rank(), c.Size()
	if want := os.Getenv("OMPI_COMM_WORLD_SIZE"); want != fmt.Sprint(n) {
		return fmt.Errorf("size %d, mpirun says %s", n, want)
	}
	const length = 23
	f32, f64 := make([]float32, length), make([]float64, length)
	for i := range length {
		f32[i], f64[i] = float32((r+1)*(i+1)), float64(r*1000-i)
	}
	if err := c.AllreduceF32(f32); err != nil {
		return err
	}
	if err := c.AllreduceF64(f64); err != nil {
		return err
	}
	ranks := n * (n + 1) / 2 // Σ (r+1)
	for i := range length {
		if f32[i] != float32(ranks*(i+1)) {
			return fmt.Errorf("rank %d: allreduce f32[%d] = %v, want %d", r, i, f32[i], ranks*(i+1))
		}
		if want := float64(1000*(n*(n-1)/2) - n*i); f64[i] != want {
			return fmt.Errorf("rank %d: allreduce f64[%d] = %v, want %v", r, i, f64[i], want)
		}
	}
	root := n - 1
	b32, b64, bb := make([]float32, length), make([]float64, length), make([]byte, length)
	for i := range length {
		b32[i], b64[i], bb[i] = float32(r*100+i), float64(r)+0.25*float64(i), byte(r+i)
	}
	for _, err := range []error{c.BcastF32(b32, root), c.BcastF64(b64, root), c.BcastBytes(bb, root), c.Barrier()} {
		if err != nil {
			return err
		}
	}
	for i := range length {
		if b32[i] != float32(root*100+i) || b64[i] != float64(root)+0.25*float64(i) || bb[i] != byte(root+i) {
			return fmt.Errorf("rank %d: broadcast from %d: element %d is %v %v %v", r, root, i, b32[i], b64[i], bb[i])
		}
	}
	if err := c.BcastF32(b32, n); err == nil {
		return fmt.Errorf("broadcast from root %d of %d ranks: no error", n, n)
	}
	return nil
}

// timing prints the time of an in-place float32 all-reduce of the toy MLP's, ncsnpp-small's and
// 10 M gradients (median of 15 after 3 warm-ups), on rank 0.
func timing(c Communicator) error {
	for _, n := range []int{50_822, 1_287_527, 10_000_000} {
		buf := make([]float32, n)
		var times []time.Duration
		for k := range 18 {
			if err := c.Barrier(); err != nil {
				return err
			}
			start := time.Now()
			if err := c.AllreduceF32(buf); err != nil {
				return err
			}
			if k >= 3 {
				times = append(times, time.Since(start))
			}
		}
		slices.Sort(times)
		med := times[len(times)/2]
		if c.Rank() == 0 {
			fmt.Printf("allreduce %d floats on %d ranks: %.3f ms (%.2f GB/s of buffer)\n", n, c.Size(),
				float64(med.Microseconds())/1e3, float64(4*n)/med.Seconds()/1e9)
		}
	}
	return c.Finalize()
}

// TestMPIAllreduceTiming logs what an all-reduce costs on this machine (no limit: a measurement
// for docs/distributed.md).
func TestMPIAllreduceTiming(t *testing.T) {
	out, err, _ := mpirun(t, 2, "timing")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("\n%s", out)
}

func TestMPICollectives(t *testing.T) {
	for _, np := range []int{2, 3} {
		if out, err, _ := mpirun(t, np, "collectives"); err != nil {
			t.Errorf("mpirun -np %d: %v\n%s", np, err, out)
		}
	}
}

// TestMPIPeerFailure: a rank that calls Abort, or dies by SIGKILL, while the
// others wait in a collective ends the whole job with a non-zero status
// within 30 s (OpenMPI's launcher kills the remaining ranks).
func TestMPIPeerFailure(t *testing.T) {
	for _, role := range []string{"abort", "sigkill"} {
		out, err, took := mpirun(t, 3, role)
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: mpirun ended with %v, want a non-zero exit:\n%s", role, err, out)
		}
		if role == "abort" && exit.ExitCode() != 3 {
			t.Errorf("abort: exit status %d, want the code 3 given to Abort:\n%s", exit.ExitCode(), out)
		}
		if took > 30*time.Second {
			t.Errorf("%s: the job took %v to end, want < 30 s", role, took)
		}
		t.Logf("%s: exit status %d after %.2f s", role, exit.ExitCode(), took.Seconds())
	}
}
