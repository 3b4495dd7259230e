package train

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"holdgo/internal/budget"
)

// TestReadLossLogRefuses: ReadLossLog reads only regular files (a FIFO would block, /dev/zero never
// ends) and counts what it keeps against the memory budget: a log with more rows than the budget
// holds is refused with budget.ErrExceeded, one within it is read whole.
func TestReadLossLogRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, path := range []string{fifo, "/dev/zero", dir} {
		if _, _, err := ReadLossLog(path); !errors.Is(err, budget.ErrNotRegular) {
			t.Errorf("%s: %v, want ErrNotRegular", path, err)
		}
	}
	var b strings.Builder
	b.WriteString("step,loss\n")
	const rows = 200000
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i, i%10) // about 9 bytes a row in the file, 16 kept
	}
	log := filepath.Join(dir, "log.csv")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	steps, loss, err := ReadLossLog(log)
	if err != nil || len(steps) != rows || steps[rows-1] != rows || loss[rows-1] != 0 {
		t.Fatalf("a log within the budget: %d rows, %v", len(steps), err)
	}
	defer budget.SetLimit(budget.Limit())
	budget.SetLimit(int64(b.Len()) + 1<<18) // the file (1.7 MB) fits; 200,000 rows of two float64 columns (3.2 MB) do not
	if _, _, err := ReadLossLog(log); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("rows over the budget: %v, want ErrExceeded", err)
	}
	budget.SetLimit(int64(b.Len()) - 1)
	if _, _, err := ReadLossLog(log); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("a file over the budget: %v, want ErrExceeded", err)
	}
}

// FuzzReadLossLog: any bytes as a run's log.csv are read or refused with an error, never a panic; what
// is read has as many steps as losses, every loss finite.
func FuzzReadLossLog(f *testing.F) {
	f.Add([]byte("step,loss,lr,grad_norm,steps_per_s\n25,739.2,0.001,2860,2.8\n50,440.9,0.001,2620,3\n"))
	f.Add([]byte("step,loss\n1,NaN\n2,+Inf\n3,1e308\n"))
	f.Add([]byte("loss,step\n\"1,2\",3\n"))
	f.Add([]byte("step\n1\n"))
	f.Add([]byte(""))
	f.Add([]byte("step,loss\n1,2,3,4,5\n,\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "log.csv")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		steps, loss, err := ReadLossLog(path)
		if err != nil {
			return
		}
		if len(steps) != len(loss) || len(steps) == 0 {
			t.Fatalf("%d steps, %d losses", len(steps), len(loss))
		}
		for _, l := range loss {
			if math.IsNaN(l) || math.IsInf(l, 0) {
				t.Fatalf("a non-finite loss %v was kept", l)
			}
		}
	})
}
