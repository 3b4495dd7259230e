package restore

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/internal/linref"
	"holdgo/rng"
	"holdgo/sample"
)

// The 4×4 Gaussian prior of restoration.md §2(c): μ = 0, C_ij = 0.25·exp(−|p_i − p_j|²/(2·1.5²)) + 10⁻³δ_ij.
func prior16() (mean, cov []float64) {
	const d = 16
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	for i := range d {
		for j := range d {
			dr, dc := float64(i/4-j/4), float64(i%4-j%4)
			cov[i*d+j] = 0.25 * math.Exp(-(dr*dr+dc*dc)/(2*1.5*1.5))
			if i == j {
				cov[i*d+j] += 1e-3
			}
		}
	}
	return mean, cov
}

func newSDE(t *testing.T, kind string) *hold.SDE {
	t.Helper()
	sde, err := hold.New(hold.DefaultConfig(kind))
	if err != nil {
		t.Fatal(err)
	}
	return sde
}

// refGauge is the aligned gauge of one time computed independently of the package: Σ = LLᵀ from the
// kernel, Σ⁻¹m and Σ⁻¹e_n by linref, toC = Σ⁻¹m/(mᵀΣ⁻¹m), σ = (mᵀΣ⁻¹m)^(−1/2), r = Σ⁻¹e_n.
type refGauge struct {
	n         int
	sigma, rm float64
	m, toC, r []float64
	chol      [][]float64
}

func newRefGauge(sde *hold.SDE, t float64) refGauge {
	n := sde.Blocks()
	k := sde.Kernel(t)
	g := refGauge{n: n, m: make([]float64, n), chol: make([][]float64, n)}
	cov := make([][]float64, n)
	for i := range n {
		g.m[i] = k.Mean.At(i, 0)
		g.chol[i] = make([]float64, n)
		cov[i] = make([]float64, n)
		for j := range n {
			g.chol[i][j] = k.Chol.At(i, j)
		}
	}
	for i := range n {
		for j := range n {
			for q := range n {
				cov[i][j] += g.chol[i][q] * g.chol[j][q]
			}
		}
	}
	sm := linref.Solve(cov, g.m)
	en := make([]float64, n)
	en[n-1] = 1
	g.r = linref.Solve(cov, en)
	var snr float64
	for i := range n {
		snr += g.m[i] * sm[i]
		g.rm += g.r[i] * g.m[i]
	}
	g.sigma = 1 / math.Sqrt(snr)
	g.toC = make([]float64, n)
	for i := range n {
		g.toC[i] = sm[i] / snr
	}
	return g
}

// c returns toCᵀu of every data dimension of the states u (B×n·d).
func (g refGauge) c(u []float64, d int) []float64 {
	batch := len(u) / (g.n * d)
	out := make([]float64, batch*d)
	for b := range batch {
		for i := range d {
			for k := range g.n {
				out[b*d+i] += g.toC[k] * u[b*g.n*d+k*d+i]
			}
		}
	}
	return out
}

// state returns states with statistic c (B×d): u = m c + Lε − m·toCᵀLε for standard normals ε.
func (g refGauge) state(c []float64, d int, r *rng.RNG) []float64 {
	batch := len(c) / d
	n := g.n
	u := make([]float64, batch*n*d)
	e, le := make([]float64, n), make([]float64, n)
	for b := range batch {
		for i := range d {
			for k := range n {
				e[k] = r.Normal()
			}
			var proj float64
			for k := range n {
				le[k] = 0
				for q := 0; q <= k; q++ {
					le[k] += g.chol[k][q] * e[q]
				}
				proj += g.toC[k] * le[k]
			}
			for k := range n {
				u[b*n*d+k*d+i] = g.m[k]*c[b*d+i] + le[k] - g.m[k]*proj
			}
		}
	}
	return u
}

// testFunc is an arbitrary smooth denoiser x̂₀ = f(c, σ) with a non-diagonal Jacobian, reading c at
// the scale of VP's x = c/√(1+σ²) as a network would: f_j = 0.8·tanh((a_j c_j + 0.3 c_{j+1 mod d})·ρ),
// ρ = (1 + σ²)^(−1/2), a_j = 0.7 + 0.05 j.
func testFunc(dst, c []float64, sigma float64) {
	d := len(c)
	rho := 1 / math.Sqrt(1+sigma*sigma)
	for j := range d {
		dst[j] = 0.8 * math.Tanh(((0.7+0.05*float64(j))*c[j]+0.3*c[(j+1)%d])*rho)
	}
}

// testFuncVJP writes gᵀ∂f/∂c.
func testFuncVJP(dst, c, g []float64, sigma float64) {
	d := len(c)
	rho := 1 / math.Sqrt(1+sigma*sigma)
	clear(dst)
	for j := range d {
		a := 0.7 + 0.05*float64(j)
		th := math.Tanh((a*c[j] + 0.3*c[(j+1)%d]) * rho)
		f := 0.8 * (1 - th*th) * rho * g[j]
		dst[j] += a * f
		dst[(j+1)%d] += 0.3 * f
	}
}

// funcScorer is the score of testFunc on any SDE through the reference gauge: S = (rᵀm)f(c) − rᵀu and
// (gᵀ∂S/∂u)_k = (rᵀm)toC_k(gᵀ∂f/∂c) − r_k g. It gives scores only (no PredictX0), so the package's
// x̂₀-from-score path is the one under test.
type funcScorer struct {
	sde *hold.SDE
	d   int
	g   map[float64]refGauge
}

func newFuncScorer(sde *hold.SDE, d int) *funcScorer {
	return &funcScorer{sde: sde, d: d, g: map[float64]refGauge{}}
}

func (f *funcScorer) gauge(t float64) refGauge {
	g, ok := f.g[t]
	if !ok {
		g = newRefGauge(f.sde, t)
		f.g[t] = g
	}
	return g
}

func (f *funcScorer) Score(dst, x, t []float64) error {
	n, d := f.sde.Blocks(), f.d
	x0 := make([]float64, d)
	for b := range t {
		g := f.gauge(t[b])
		row := x[b*n*d : (b+1)*n*d]
		testFunc(x0, g.c(row, d), g.sigma)
		for i := range d {
			s := g.rm * x0[i]
			for k := range n {
				s -= g.r[k] * row[k*d+i]
			}
			dst[b*d+i] = s
		}
	}
	return nil
}

func (f *funcScorer) ScoreVJP(score, vjp, x, u, t []float64) error {
	if score != nil {
		if err := f.Score(score, x, t); err != nil {
			return err
		}
	}
	n, d := f.sde.Blocks(), f.d
	jg := make([]float64, d)
	for b := range t {
		g := f.gauge(t[b])
		row := x[b*n*d : (b+1)*n*d]
		testFuncVJP(jg, g.c(row, d), u[b*d:(b+1)*d], g.sigma)
		for k := range n {
			for i := range d {
				vjp[b*n*d+k*d+i] = g.rm*g.toC[k]*jg[i] - g.r[k]*u[b*d+i]
			}
		}
	}
	return nil
}

var _ sample.DivScorer = (*funcScorer)(nil)

// tableNoise is a Noise independent of the package's streams: problem p's draw k is the normals of
// rng.New(1000·p + k + 1).
type tableNoise struct{}

func (tableNoise) Fill(dst []float64, problem, draw int) {
	r := rng.New(uint64(1000*problem + draw + 1))
	for i := range dst {
		dst[i] = r.Normal()
	}
}

// dense returns A (m×d) applied to unit vectors.
func dense(op Operator) [][]float64 {
	d, m := op.Dim(), op.Rows()
	a := make([][]float64, m)
	for i := range a {
		a[i] = make([]float64, d)
	}
	e, col := make([]float64, d), make([]float64, m)
	for j := range d {
		clear(e)
		e[j] = 1
		op.Apply(col, e)
		for i := range m {
			a[i][j] = col[i]
		}
	}
	return a
}

func matVec(a [][]float64, x []float64) []float64 {
	out := make([]float64, len(a))
	for i, row := range a {
		for j, v := range row {
			out[i] += v * x[j]
		}
	}
	return out
}

func matTVec(a [][]float64, y []float64) []float64 {
	out := make([]float64, len(a[0]))
	for i, row := range a {
		for j, v := range row {
			out[j] += v * y[i]
		}
	}
	return out
}

func maxAbsDiff(a, b []float64) float64 {
	var worst float64
	for i := range a {
		worst = math.Max(worst, math.Abs(a[i]-b[i]))
	}
	if len(a) != len(b) {
		return math.Inf(1)
	}
	return worst
}

// inpaint8 measures 8 of the 16 pixels of a 4×4 image (a checkerboard of 2×2 blocks).
func inpaint8(t *testing.T) *Mask {
	t.Helper()
	var known []int
	for i := range 16 {
		if (i/4/2+i%4/2)%2 == 0 {
			known = append(known, i)
		}
	}
	op, err := NewMask(16, known)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func pool2(t *testing.T) *Pool {
	t.Helper()
	op, err := NewPool(1, 4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	return op
}
