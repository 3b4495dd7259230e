package sample

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
)

// TestSolveODEKnownSolution: a damped rotation y' = [[−a, w], [−w, −a]]y plus the logistic equation,
// both with closed-form solutions, integrated forwards and backwards. The global error must stay within a
// small multiple of the tolerance and fall with it; the NFE accounting is 2 + 6 per attempted step.
func TestSolveODEKnownSolution(t *testing.T) {
	const a, w, t1 = 0.3, 2.0, 8.0
	f := func(_ float64, y, dy []float64) error {
		dy[0] = -a*y[0] + w*y[1]
		dy[1] = -w*y[0] - a*y[1]
		dy[2] = y[2] * (1 - y[2])
		return nil
	}
	exact := func(tt float64) []float64 {
		e := math.Exp(-a * tt)
		return []float64{e * math.Cos(w*tt), -e * math.Sin(w*tt), 1 / (1 + 9*math.Exp(-tt))}
	}
	prevErr, prevEvals := math.Inf(1), 0
	for _, tol := range []float64{1e-4, 1e-6, 1e-8} {
		y := exact(0)
		st, err := SolveODE(f, 0, t1, y, ODEOptions{RTol: tol, ATol: tol}, []float64{2, 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := exact(t1)
		var maxErr float64
		for i := range y {
			maxErr = math.Max(maxErr, math.Abs(y[i]-want[i])/(tol+tol*math.Abs(want[i])))
		}
		t.Logf("tol %g: error %.2f·tol, %d evaluations (%d accepted, %d rejected)", tol, maxErr, st.Evals, st.Accepted, st.Rejected)
		if maxErr > 20 {
			t.Errorf("tol %g: global error %.1f times the tolerance", tol, maxErr)
		}
		if st.Evals != 2+6*(st.Accepted+st.Rejected) {
			t.Errorf("tol %g: %d evaluations for %d attempted steps", tol, st.Evals, st.Accepted+st.Rejected)
		}
		if !(maxErr*tol < prevErr) || st.Evals <= prevEvals {
			t.Errorf("tol %g: error %g (before %g), evaluations %d (before %d): no improvement", tol, maxErr*tol, prevErr, st.Evals, prevEvals)
		}
		prevErr, prevEvals = maxErr*tol, st.Evals
		// and back to the start
		if _, err := SolveODE(f, t1, 0, y, ODEOptions{RTol: tol, ATol: tol}, nil, nil); err != nil {
			t.Fatal(err)
		}
		for i, v := range exact(0) {
			if !(math.Abs(y[i]-v) <= 50*tol) {
				t.Errorf("tol %g: round trip component %d is %g, want %g", tol, i, y[i], v)
			}
		}
	}
	var stops []float64
	y := exact(0)
	if _, err := SolveODE(f, 0, 4, y, ODEOptions{RTol: 1e-9, ATol: 1e-9}, []float64{1, 2.5}, func(tt float64, yy []float64) {
		stops = append(stops, tt)
		if e := exact(tt); !(math.Abs(yy[0]-e[0]) <= 1e-7) {
			t.Errorf("stop at %g: y0 = %g, want %g", tt, yy[0], e[0])
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(stops) != 2 || stops[0] != 1 || stops[1] != 2.5 {
		t.Errorf("stops %v, want [1 2.5]", stops)
	}
	if _, err := SolveODE(f, 0, 4, y, ODEOptions{}, []float64{5}, nil); err == nil {
		t.Error("a stop outside the interval was accepted")
	}
}

// TestProbabilityFlowRoundTrip integrates data → prior with the forward-time probability-flow ODE and
// back with the DormandPrince sampler: the start must come back within the tolerance.
func TestProbabilityFlowRoundTrip(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindCLD, hold.KindVP} {
		sde := newSDE(t, kind)
		orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
		const batch, eps, tol = 16, 1e-3, 1e-7
		n := sde.Blocks()
		r := rng.New(9)
		start := make([]float64, batch*n)
		for b := 0; b < batch; b++ {
			start[b*n] = hold.PaperMixture().Means[b%3][0] + 0.01*r.Normal()
			for k := 1; k < n; k++ {
				start[b*n+k] = 0.1 * r.Normal()
			}
		}
		s := &Sampler{SDE: sde, Score: orc, Method: DormandPrince{RTol: tol, ATol: tol}, Grid: []float64{sde.Horizon(), eps}, Dim: 1}
		ru := s.newRun(batch, nil)
		ru.grid = []float64{eps, sde.Horizon()}
		x := append([]float64(nil), start...)
		fwd := func(tt float64, y, dy []float64) error {
			if err := pfDrift(ru, dy, y, batch, tt); err != nil {
				return err
			}
			for i := range dy {
				dy[i] = -dy[i]
			}
			return nil
		}
		if _, err := SolveODE(fwd, eps, sde.Horizon(), x, ODEOptions{RTol: tol, ATol: tol}, nil, nil); err != nil {
			t.Fatal(err)
		}
		nfe, _, err := s.Run(x, batch, rng.New(1))
		if err != nil {
			t.Fatal(err)
		}
		var maxErr float64
		for i := range x {
			maxErr = math.Max(maxErr, math.Abs(x[i]-start[i]))
		}
		t.Logf("%s: round trip error %.2e (tol %g), backward NFE %d", kind, maxErr, tol, nfe)
		if !(maxErr <= 100*tol) {
			t.Errorf("%s: data → prior → data moved a point by %g", kind, maxErr)
		}
	}
}
