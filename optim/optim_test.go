package optim

import (
	"math"
	"testing"
)

func TestClipGradNorm(t *testing.T) {
	g := []float32{3, 4} // norm 5
	if n := ClipGradNorm(g, 10); n != 5 || g[0] != 3 {
		t.Fatalf("no clip expected: norm %v, g %v", n, g)
	}
	if n := ClipGradNorm(g, 1); n != 5 {
		t.Fatalf("norm %v, want 5", n)
	}
	// torch: scale by max/(norm+1e-6)
	want := 3 * (1 / (5 + 1e-6))
	if !(math.Abs(float64(g[0])-want) <= 1e-7) || !(math.Abs(math.Hypot(float64(g[0]), float64(g[1]))-1) <= 1e-6) {
		t.Fatalf("clipped to %v", g)
	}
}

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
// (incremented first), decay = min(rate, (1+n)/(10+n)).
func TestEMADecaySchedule(t *testing.T) {
	e := NewEMA(0.999, []float32{0})
	want := 0.0
	for n := 1; n <= 2000; n++ {
		p := float32(n % 7)
		e.Update([]float32{p})
		decay := math.Min(0.999, float64(1+n)/float64(10+n))
		want -= (1 - decay) * (want - float64(p))
	}
	if !(math.Abs(float64(e.Shadow[0])-want) <= 1e-4) {
		t.Fatalf("EMA %v, hand-computed %v", e.Shadow[0], want)
	}
}

// TestAdamFirstStep: with bias correction the first update is lr·g/(|g|+eps).
func TestAdamFirstStep(t *testing.T) {
	a := NewAdam(2)
	p, g := []float32{1, 1}, []float32{0.5, -2e-3}
	a.Update(p, g, 0.1)
	for i, gi := range g {
		want := 1 - 0.1*float64(gi)/(math.Abs(float64(gi))+1e-8)
		if !(math.Abs(float64(p[i])-want) <= 1e-6) {
			t.Fatalf("param %d = %v, want %v", i, p[i], want)
		}
	}
}

// TestEMAFirstUpdates pins the warm-up decays update by update with literal
// values of score_sde's ema.py (num_updates incremented before use, decay =
// min(rate, (1+n)/(10+n))): 2/11, 3/12, 4/13, … The long-run test above cannot
// tell this from the off-by-one n/(9+n) (1/10, 2/11, …); a single update can:
// from shadow 0 towards 1 it lands on 9/11, not 9/10. Rate 0.45 caps the decay
// from the 7th update on ((1+7)/(10+7) = 8/17 > 0.45).
func TestEMAFirstUpdates(t *testing.T) {
	decays := []float64{2.0 / 11, 3.0 / 12, 4.0 / 13, 5.0 / 14, 6.0 / 15, 7.0 / 16, 0.45, 0.45, 0.45, 0.45}
	params := []float64{1, -2, 0.5, 3, 0, 1.5, -1, 2, 0.25, -0.75}
	e := NewEMA(0.45, []float32{0, 4})
	shadow := []float64{0, 4}
	for i, p := range params {
		e.Update([]float32{float32(p), float32(-p)})
		for j, q := range []float64{p, -p} {
			shadow[j] = decays[i]*shadow[j] + (1-decays[i])*q
			if got := float64(e.Shadow[j]); !(math.Abs(got-shadow[j]) <= 1e-6) {
				t.Fatalf("update %d, weight %d: EMA %v, want %v (decay %v)", i+1, j, got, shadow[j], decays[i])
			}
		}
	}
	if e.Updates != len(params) {
		t.Errorf("%d updates counted, want %d", e.Updates, len(params))
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
