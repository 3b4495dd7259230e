package restore

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
	"holdgo/sample"
)

// TestExactDenoiserMixtureWeights is T1 on a multimodal prior: six points q_k of a 4×4 image with
// unequal weights w_k. Given y = A q0 + σ_y n the posterior is again the six points, with weights
// π_k ∝ w_k·exp(−‖y − A q_k‖²/(2σ_y²)) (computed here in closed form); the exact conditional denoiser is
// the mixture oracle of that posterior (hold.MixtureOracle). Run through restore's driver (method
// exact, sde2 step) and through an aligned sampler of package sample (insertion point (i)), the share
// of the n = 20,000 samples nearest each point matches π_k within 3.5 binomial standard errors, on
// HOLD-3 with the checkerboard inpainting mask and 2× pooling (100 steps of the λ grid).
func TestExactDenoiserMixtureWeights(t *testing.T) {
	const n, d, k = 20000, 16, 6
	r := rng.New(23)
	points := make([]float64, k*d)
	for i := range points {
		points[i] = 2*r.Float64() - 1
	}
	weights := []float64{0.3, 0.25, 0.15, 0.12, 0.1, 0.08}
	sde := newSDE(t, hold.KindHOLD)
	grid, err := sample.NewSigmaGrid(sde, sample.GridLambda, sde.Horizon(), sample.DefaultSigmaMin, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op     Operator
		sigmaY float64 // large enough that several posterior weights are far from 0 and 1
	}{{inpaint8(t), 1.6}, {pool2(t), 0.35}} {
		op, sigmaY := tc.op, tc.sigmaY
		// y: a point between q_0 and q_1 so that several posterior weights are far from 0 and 1.
		mid := make([]float64, d)
		for i := range mid {
			mid[i] = 0.5 * (points[i] + points[d+i])
		}
		y := Measure(op, mid, sigmaY, 3, 0)
		post := make([]float64, k)
		ak := make([]float64, op.Rows())
		var lmax = math.Inf(-1)
		for j := range k {
			op.Apply(ak, points[j*d:(j+1)*d])
			var e float64
			for i, v := range ak {
				e += (y[i] - v) * (y[i] - v)
			}
			post[j] = math.Log(weights[j]) - e/(2*sigmaY*sigmaY)
			lmax = math.Max(lmax, post[j])
		}
		var z float64
		for j := range post {
			post[j] = math.Exp(post[j] - lmax)
			z += post[j]
		}
		for j := range post {
			post[j] /= z
		}
		mix := hold.PointMasses(points, d)
		mix.Weights = post
		oracle, err := hold.NewMixtureOracle(sde, mix)
		if err != nil {
			t.Fatal(err)
		}
		// restore's driver, 100 images × 200 samples.
		images := make([]int, n/200)
		probs := make([]Problem, len(images))
		for i := range images {
			images[i] = i
			probs[i] = Problem{Op: op, Y: y, SigmaY: sigmaY, Exact: oracle}
		}
		u := PriorStates(sde, d, 200, 9, images)
		rs := &Restorer{SDE: sde, Method: Method{Name: MethodExact, Step: StepSDE2}, Grid: grid, Dim: d}
		if _, _, err := rs.Run(u, probs, 200, PhiloxNoise{Seed: 9, Images: images}); err != nil {
			t.Fatal(err)
		}
		checkModeShares(t, "restore exact (sde2)", op, sde, grid, u, points, post, n, d)
		// An aligned sampler of package sample with the oracle as its score.
		meth, _, err := sample.NewMethod("a-sde2", sample.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := &sample.Sampler{SDE: sde, Score: oracle, Method: meth, Grid: grid, Dim: d, MaxBatch: 5000}
		res, err := s.Sample(n, 11)
		if err != nil {
			t.Fatal(err)
		}
		checkModeShares(t, "a-sde2", op, sde, grid, res.X, points, post, n, d)
	}
}

// checkModeShares assigns each sample's c at the grid's end to its nearest point and compares the
// shares with the posterior weights.
func checkModeShares(t *testing.T, name string, op Operator, sde *hold.SDE, grid, u, points, post []float64, n, d int) {
	t.Helper()
	g := newRefGauge(sde, grid[len(grid)-1])
	c := g.c(u, d)
	counts := make([]float64, len(post))
	for s := range n {
		best, bd := 0, math.Inf(1)
		for j := range post {
			var e float64
			for i := range d {
				v := c[s*d+i] - points[j*d+i]
				e += v * v
			}
			if e < bd {
				best, bd = j, e
			}
		}
		if !(math.Sqrt(bd) <= 0.05) {
			t.Fatalf("%s, %T: sample %d lies %.3g from the nearest point, want a point of the posterior", name, op, s, math.Sqrt(bd))
		}
		counts[best]++
	}
	for j, p := range post {
		share := counts[j] / float64(n)
		se := math.Sqrt(p * (1 - p) / float64(n))
		if !(math.Abs(share-p) <= 3.5*se+1e-12) {
			t.Errorf("%s, %T: point %d holds %.4f of the samples, posterior weight %.4f (3.5 s.e. = %.4f)", name, op, j, share, p, 3.5*se)
		}
	}
	t.Logf("%s, %T: posterior weights %.3f, shares %.3f", name, op, post, func() []float64 {
		v := make([]float64, len(counts))
		for j := range v {
			v[j] = counts[j] / float64(n)
		}
		return v
	}())
}
