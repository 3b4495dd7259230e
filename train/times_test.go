package train

import (
	"math"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
)

// ksDistance is the Kolmogorov–Smirnov distance of the sample x to the CDF.
func ksDistance(x []float64, cdf func(float64) float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	n := float64(len(x))
	d := 0.0
	for i, v := range x {
		f := cdf(v)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

// TestSampleTimesMixedLogMin checks the time sampler against its laws: with
// TimesMixed and LogMin a, even samples are uniform on [t_min, T] and odd
// ones log-uniform on [a, T] (Kolmogorov–Smirnov at the 0.1 % level, 20,000
// of each), every odd one ≥ a; LogMin 0 gives the log-uniform law on [t_min, T].
func TestSampleTimesMixedLogMin(t *testing.T) {
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := sde.MinTime(), sde.Horizon()
	const n = 40000
	crit := 1.95 / math.Sqrt(n/2) // KS, p = 0.001
	for _, a := range []float64{0, 1e-3, 0.05} {
		ts := TimeSampling{Scheme: TimesMixed, LogMin: a}
		if err := ts.validate(sde); err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, n)
		// Two calls (a shard split at an odd offset) must give the same times as one.
		s := rng.Stream{Key: 7, Step: 3, ID: rng.StreamTimes}
		sampleTimes(sde, ts, dst[:12345], s, 0)
		sampleTimes(sde, ts, dst[12345:], s, 12345)
		var even, odd []float64
		for i, v := range dst {
			if i%2 == 0 {
				even = append(even, v)
			} else {
				odd = append(odd, v)
			}
		}
		la := math.Log(max(a, lo))
		if m := slices.Min(odd); m < max(a, lo) {
			t.Errorf("LogMin %g: an odd sample at %g", a, m)
		}
		if d := ksDistance(even, func(v float64) float64 { return (v - lo) / (hi - lo) }); d > crit {
			t.Errorf("LogMin %g: even samples: KS distance %.4f to U[%g, %g] (critical %.4f)", a, d, lo, hi, crit)
		}
		if d := ksDistance(odd, func(v float64) float64 { return (math.Log(v) - la) / (math.Log(hi) - la) }); d > crit {
			t.Errorf("LogMin %g: odd samples: KS distance %.4f to log-uniform on [%g, %g] (critical %.4f)", a, d, math.Exp(la), hi, crit)
		}
	}
	for _, bad := range []TimeSampling{{Scheme: "normal"}, {Scheme: TimesMixed, LogMin: -1}, {Scheme: TimesMixed, LogMin: hi}, {Scheme: TimesMixed, LogMin: math.NaN()}} {
		if err := bad.validate(sde); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
