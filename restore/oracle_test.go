package restore

import (
	"fmt"
	"math"
	"os"
	"testing"

	"holdgo/hold"
	"holdgo/internal/linref"
	"holdgo/rng"
	"holdgo/sample"
)

// refPosterior is the closed-form posterior of restoration.md §2(c) by linref (no Cholesky shared with
// the package): V = ACAᵀ + σ_y²I, μ_y = μ + CAᵀV⁻¹(y − Aμ), Σ_y = C − CAᵀV⁻¹AC.
func refPosterior(mean, cov []float64, a [][]float64, y []float64, sigmaY float64) (mu []float64, sig [][]float64) {
	d, m := len(mean), len(a)
	c := make([][]float64, d)
	for i := range c {
		c[i] = cov[i*d : (i+1)*d]
	}
	ac := make([][]float64, m) // AC
	for i := range m {
		ac[i] = matTVec(c, a[i]) // (AC)_i = Σ_q A_iq C_q· (C symmetric)
	}
	v := make([][]float64, m)
	for i := range m {
		v[i] = matVec(ac, a[i]) // (ACAᵀ)_i· by symmetry
		v[i][i] += sigmaY * sigmaY
	}
	res := matVec(a, mean)
	for j := range res {
		res[j] = y[j] - res[j]
	}
	sol := linref.Solve(v, res)
	mu = append([]float64(nil), mean...)
	for j := range m {
		for i := range d {
			mu[i] += ac[j][i] * sol[j]
		}
	}
	sig = make([][]float64, d)
	col := make([]float64, m)
	for k := range d {
		for j := range m {
			col[j] = ac[j][k]
		}
		x := linref.Solve(v, col) // V⁻¹(AC)_{·k}
		for i := range d {
			if sig[i] == nil {
				sig[i] = make([]float64, d)
			}
			s := cov[i*d+k]
			for j := range m {
				s -= ac[j][i] * x[j]
			}
			sig[i][k] = s
		}
	}
	return mu, sig
}

// checkMoments compares the sample mean and covariance of the coordinates free of the rows of x
// (n×d) with N(mu, sig + extra·I): every mean within 3.5 standard errors √(Σ_ii/n), every covariance
// within 3.5·√((Σ_iiΣ_jj + Σ_ij²)/n).
func checkMoments(x []float64, d int, free []int, mu []float64, sig [][]float64, extra float64) error {
	n := len(x) / d
	m := make([]float64, d)
	for s := range n {
		for i := range d {
			m[i] += x[s*d+i]
		}
	}
	for i := range m {
		m[i] /= float64(n)
	}
	want := func(i, j int) float64 {
		v := sig[i][j]
		if i == j {
			v += extra
		}
		return v
	}
	for a, i := range free {
		if z := math.Abs(m[i]-mu[i]) / math.Sqrt(want(i, i)/float64(n)); !(z <= 3.5) {
			return fmt.Errorf("mean %d: %.5f, want %.5f (z = %.2f)", i, m[i], mu[i], z)
		}
		for _, j := range free[a:] {
			var c float64
			for s := range n {
				c += (x[s*d+i] - m[i]) * (x[s*d+j] - m[j])
			}
			c /= float64(n - 1)
			se := math.Sqrt((want(i, i)*want(j, j) + want(i, j)*want(i, j)) / float64(n))
			if z := math.Abs(c-want(i, j)) / se; !(z <= 3.5) {
				return fmt.Errorf("covariance (%d, %d): %.6f, want %.6f (z = %.2f)", i, j, c, want(i, j), z)
			}
		}
	}
	return nil
}

// setup16 returns the prior, an observation of the 4×4 Gaussian task and the reference posterior.
func setup16(t *testing.T, op Operator, sigmaY float64) (y, mu []float64, sig [][]float64, post *GaussianOracle, sde *hold.SDE) {
	t.Helper()
	mean, cov := prior16()
	q0 := make([]float64, 16)
	r := rng.New(17)
	// q0 = a draw of the prior: C's Cholesky factor by the plain algorithm.
	l := make([]float64, 16*16)
	for i := range 16 {
		for j := 0; j <= i; j++ {
			s := cov[i*16+j]
			for k := range j {
				s -= l[i*16+k] * l[j*16+k]
			}
			if i == j {
				l[i*16+i] = math.Sqrt(s)
			} else {
				l[i*16+j] = s / l[j*16+j]
			}
		}
	}
	e := make([]float64, 16)
	for i := range e {
		e[i] = r.Normal()
	}
	for i := range 16 {
		for j := 0; j <= i; j++ {
			q0[i] += l[i*16+j] * e[j]
		}
	}
	y = Measure(op, q0, sigmaY, 5, 0)
	mu, sig = refPosterior(mean, cov, dense(op), y, sigmaY)
	sde = newSDE(t, hold.KindHOLD)
	pm, ps, err := GaussianPosterior(mean, cov, op, y, sigmaY)
	if err != nil {
		t.Fatal(err)
	}
	if post, err = NewGaussianOracle(sde, pm, ps); err != nil {
		t.Fatal(err)
	}
	return y, mu, sig, post, sde
}

// TestExactDenoiserPosterior is T1: the exact conditional denoiser (the oracle of the posterior
// N(μ_y, Σ_y)) through the aligned samplers of package sample (insertion point (i); a-sde2 with 200
// steps, a-anc with 1000: with 200 its point-x̂₀ step under-disperses by about 5 %, as restoration.md's
// W2 table says) and Euler–Maruyama (insertion point (ii), 1000 steps), and through restore's own
// driver (method exact), gives samples of the posterior: c at the grid's end (read by the test's own
// gauge) has mean μ_y and covariance Σ_y + σ_end²I within 3.5 standard errors at n = 20,000 on HOLD-3
// with the 4×4 Gaussian prior, μ_y and Σ_y by linref. Measured pixels of a noiseless task have no
// posterior spread: their c must lie within 6σ_end of y. By default two of the eight cases run (≈ 10 s);
// HOLDGO_LONG=1 runs all eight (about 4 minutes on one core).
func TestExactDenoiserPosterior(t *testing.T) {
	const n = 20000
	type run struct {
		sampler string // a registry name, or "" for restore's driver with an sde2 step
		steps   int
	}
	type task struct {
		name   string
		op     Operator
		sigmaY float64
		runs   []run
	}
	tasks := []task{
		{"inpaint σ_y 0", inpaint8(t), 0, []run{{"a-sde2", 200}}},
		{"sr2 σ_y 0.05", pool2(t), 0.05, []run{{"", 200}}},
	}
	if os.Getenv("HOLDGO_LONG") != "" { // the six other cases: about 4 minutes on one core
		tasks[0].runs = append(tasks[0].runs, run{"", 200}, run{"a-anc", 1000}, run{"em", 1000})
		tasks[1].runs = append(tasks[1].runs, run{"a-sde2", 200}, run{"a-anc", 1000}, run{"em", 1000})
	}
	for _, tk := range tasks {
		y, mu, sig, post, sde := setup16(t, tk.op, tk.sigmaY)
		var free, known []int
		for i := range 16 {
			if tk.sigmaY == 0 && sig[i][i] < 1e-12 {
				known = append(known, i)
			} else {
				free = append(free, i)
			}
		}
		for _, rc := range tk.runs {
			var grid []float64
			var err error
			if rc.sampler == "em" {
				grid, err = sample.NewSDEGrid(sde, sample.GridQuadratic, sde.Horizon(), 1e-3, rc.steps)
			} else {
				grid, err = sample.NewSigmaGrid(sde, sample.GridLambda, sde.Horizon(), sample.DefaultSigmaMin, rc.steps)
			}
			if err != nil {
				t.Fatal(err)
			}
			var u []float64
			name := rc.sampler
			if rc.sampler != "" {
				meth, _, err := sample.NewMethod(rc.sampler, sample.Options{})
				if err != nil {
					t.Fatal(err)
				}
				s := &sample.Sampler{SDE: sde, Score: post, Method: meth, Grid: grid, Dim: 16, MaxBatch: 5000}
				res, err := s.Sample(n, 7)
				if err != nil {
					t.Fatal(err)
				}
				u = res.X
			} else {
				name = "restore exact (sde2)"
				images := make([]int, n/100)
				probs := make([]Problem, len(images))
				for i := range images {
					images[i] = i
					probs[i] = Problem{Op: tk.op, Y: y, SigmaY: tk.sigmaY, Exact: post}
				}
				u = PriorStates(sde, 16, 100, 7, images)
				r := &Restorer{SDE: sde, Method: Method{Name: MethodExact, Step: StepSDE2}, Grid: grid, Dim: 16}
				if _, _, err := r.Run(u, probs, 100, PhiloxNoise{Seed: 7, Images: images}); err != nil {
					t.Fatal(err)
				}
			}
			g := newRefGauge(sde, grid[len(grid)-1])
			c := g.c(u, 16)
			if err := checkMoments(c, 16, free, mu, sig, g.sigma*g.sigma); err != nil {
				t.Errorf("%s, %s: %v", tk.name, name, err)
			}
			for s := range n {
				for j, k := range known {
					if !(math.Abs(c[s*16+k]-y[j]) <= 6*g.sigma) {
						t.Fatalf("%s, %s: sample %d's measured pixel %d is %g, want y = %g within 6σ_end = %.2g", tk.name, name, s, k, c[s*16+k], y[j], 6*g.sigma)
					}
				}
			}
		}
	}
}
