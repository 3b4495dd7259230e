package train

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress reports training progress: a redrawn bar with loss and ETA on a
// terminal, plain lines every `every` steps otherwise (logs, CI).
type progress struct {
	w          io.Writer
	tty        bool
	start, end int
	every      int
	began      time.Time
	lastDraw   time.Time
	drawn      bool
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, start, end, every int) *progress {
	return &progress{w: w, tty: isTerminal(w), start: start, end: end, every: every, began: time.Now()}
}

func (p *progress) update(st Stats) {
	done := st.Step - p.start
	elapsed := time.Since(p.began)
	rate := float64(done) / elapsed.Seconds()
	eta := time.Duration(float64(p.end-st.Step) / rate * float64(time.Second)).Round(time.Second)
	if !p.tty {
		if st.Step%p.every == 0 || st.Step == p.end {
			fmt.Fprintf(p.w, "step %d/%d  loss %.4f  grad-norm %.3g  %.1f steps/s  ETA %s\n", st.Step, p.end, st.Loss, st.GradNorm, rate, eta)
		}
		return
	}
	if time.Since(p.lastDraw) < 100*time.Millisecond && st.Step != p.end {
		return
	}
	p.lastDraw, p.drawn = time.Now(), true
	const width = 30
	frac := float64(st.Step) / float64(max(p.end, 1))
	fill := int(frac * width)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d  loss %.4f  %.1f it/s  ETA %s   ", strings.Repeat("#", fill),
		strings.Repeat(".", width-fill), st.Step, p.end, st.Loss, rate, eta)
}

func (p *progress) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
