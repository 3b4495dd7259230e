package optim

import (
	"math"
	"testing"
)

func TestWarmupLR(t *testing.T) {
	for _, c := range []struct {
		step, warmup int
		want         float64
	}{{0, 100, 0}, {50, 100, 0.5e-3}, {100, 100, 1e-3}, {500, 100, 1e-3}, {0, 0, 1e-3}} {
		if got := WarmupLR(1e-3, c.step, c.warmup); !(math.Abs(got-c.want) <= 1e-15) {
			t.Errorf("WarmupLR(step %d, warmup %d) = %v, want %v", c.step, c.warmup, got, c.want)
		}
	}
}

// TestEMADecaySchedule follows score_sde's ema.py by hand: n counts updates
// (incremented first), decay = min(rate, (1+n)/(10+n)), over the warm-up
// into the cap. (tensor.EMA applies a decay: the backend table checks it.)
func TestEMADecaySchedule(t *testing.T) {
	e := NewEMA(0.999, []float32{0})
	for n := 1; n <= 2000; n++ {
		want := math.Min(0.999, float64(1+n)/float64(10+n))
		if got := e.NextDecay(); got != want {
			t.Fatalf("update %d: decay %v, want %v", n, got, want)
		}
		e.Updates++
	}
}

// TestEMAFirstUpdates pins the warm-up decays update by update with literal
// values of score_sde's ema.py (num_updates incremented before use, decay =
// min(rate, (1+n)/(10+n))): 2/11, 3/12, 4/13, … not the off-by-one n/(9+n)
// (1/10, 2/11, …): a single update from shadow 0 towards 1 lands on 9/11, not
// 9/10. Rate 0.45 caps the decay from the 7th update on ((1+7)/(10+7) = 8/17 >
// 0.45).
func TestEMAFirstUpdates(t *testing.T) {
	decays := []float64{2.0 / 11, 3.0 / 12, 4.0 / 13, 5.0 / 14, 6.0 / 15, 7.0 / 16, 0.45, 0.45, 0.45, 0.45}
	e := NewEMA(0.45, []float32{0, 4})
	for i, want := range decays {
		if got := e.NextDecay(); !(math.Abs(got-want) <= 1e-15) {
			t.Fatalf("update %d: decay %v, want %v", i+1, got, want)
		}
		e.Updates++
	}
}

// TestScheduledLR checks the cosine schedule at points where ½(1 + cos πu)
// has exact values, after a warm-up, and that "none" keeps the rate.
func TestScheduledLR(t *testing.T) {
	const lr = 2e-3
	for _, c := range []struct {
		step, warmup, steps int
		decay               string
		want                float64
	}{
		{0, 0, 1000, DecayCosine, lr},
		{250, 0, 1000, DecayCosine, lr * (2 + math.Sqrt2) / 4},
		{500, 0, 1000, DecayCosine, lr / 2},
		{750, 0, 1000, DecayCosine, lr * (2 - math.Sqrt2) / 4},
		{1000, 0, 1000, DecayCosine, 0},
		{2000, 0, 1000, DecayCosine, 0}, // past the end (a resume with fewer steps): stays at 0
		{50, 100, 1000, DecayCosine, lr * 0.5 * (1 + math.Cos(math.Pi*0.05)) * 0.5},
		{500, 100, 1000, DecayNone, lr},
		{500, 0, 1000, "", lr},
	} {
		got := ScheduledLR(lr, c.step, c.warmup, c.steps, c.decay)
		if !(math.Abs(got-c.want) <= 1e-15) {
			t.Errorf("ScheduledLR(step %d, warmup %d, steps %d, %q) = %.17g, want %.17g", c.step, c.warmup, c.steps, c.decay, got, c.want)
		}
	}
}
