// Package sample draws samples from the HOLD family of diffusion models (HOLD-n, CLD, VP, VE in package
// hold) with a score function — a trained network, its EMA copy or the exact MixtureOracle — and
// estimates likelihoods through the probability-flow ODE.
//
// A Sampler runs the reverse process on a grid of forward times t_0 = T > … > t_N = ε with one Method:
//
//   - LieTrotter: Strang splitting A(h/2)·B(h)·A(h/2) with the exact A-step of hold (the paper's
//     sampler; for CLD it is CLD-SGM's SSCS), one score evaluation per step. Its B-step is the paper's
//     explicit Euler step (BEuler) or an exponential integrator (BExpKernel, "LT-exp"; BExpFrozen).
//   - EulerMaruyama on the reverse SDE; PredictorCorrector (reverse-diffusion predictor and Langevin
//     corrector, score_sde's PC sampler for VE).
//   - Heun and RK4 with fixed steps, DormandPrince adaptive, on the probability-flow ODE.
//
// Every sampler counts its score evaluations (NFE) exactly. Batches are processed in chunks of at most
// MaxBatch samples, each chunk with its own generator derived from the seed, so results depend only on
// (seed, MaxBatch) and not on the number of workers. States are float64 rows of n·d values, block k in
// columns [k·d, (k+1)·d), as in package hold.
package sample

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"holdgo/hold"
	"holdgo/internal/parallel"
	"holdgo/rng"
)

// DefaultMaxBatch is the chunk size used when Sampler.MaxBatch is 0.
const DefaultMaxBatch = 4096

// Method is one numerical scheme for the reverse process.
type Method interface {
	// Name identifies the scheme in tables ("lt", "lt-exp", "em", …).
	Name() string
	// integrate advances the batch x (B×n·d) in place from run.grid[0] to the grid's last time.
	integrate(r *run, x []float64, batch int) error
}

// stepper is a fixed-step method: one step from forward time t to t − h.
type stepper interface {
	step(r *run, x []float64, batch int, t, h float64) error
}

// Sampler draws samples of an SDE with a score function on a time grid.
type Sampler struct {
	SDE    *hold.SDE
	Score  hold.Scorer
	Method Method
	Grid   []float64 // forward times, strictly decreasing (NewGrid); the adaptive solver uses only the ends
	Dim    int       // d, data dimensions per sample

	// Denoise adds CLD-SGM's final noise-free step at the end time ε: x ← x + ε·ReverseDrift(x, ε), the
	// mean of an Euler–Maruyama step from ε to 0 (one more score evaluation).
	Denoise bool

	MaxBatch int // largest chunk; 0 means DefaultMaxBatch
	Workers  int // chunks processed concurrently (each worker forks a Forker score; another Scorer must then be safe for concurrent use; SampleOn and EachOn on a tensor.HostResident device too); 0 or 1: serial

	// Record lists forward times at which to store the states (Result.Trajectory). Fixed-step methods
	// record at the first grid time ≤ each requested time; the adaptive solver lands on it exactly.
	Record []float64
}

// Forker is a Scorer that is not safe for concurrent use but makes copies
// that are: Fork returns a Scorer with the same function (the same weights,
// its own working memory) that one more goroutine may call while the others
// are in use. Sample's workers each use a fork.
type Forker interface {
	hold.Scorer
	Fork() hold.Scorer
}

// withScore returns a copy of s for one worker: a copy that scores with score.
func (s *Sampler) withScore(score hold.Scorer) *Sampler {
	c := *s
	c.Score = score
	return &c
}

// Result holds the samples and the cost.
type Result struct {
	X          []float64   // n×(blocks·d) final states
	NFE        int         // score evaluations each sample went through (adaptive: the largest over chunks)
	ChunkNFE   []int       // score evaluations per chunk
	Trajectory *Trajectory // nil unless Record is set
	// Diverged counts the samples whose final state Diverged rejects: a learned score that grows with the state where
	// training saw no data drives a path off (seen: 1 of 5000 samples of a
	// toy model trained for 120k–160k steps, at 6e9 or Inf). They stay in X
	// as they are.
	Diverged int
}

// DivergedBound is the magnitude beyond which a final state counts as
// diverged: the data holdgo trains on are scaled to about unit size, and a
// sample a million times larger is a path that ran off, not a sample.
const DivergedBound = 1e6

// Diverged reports whether a sample's values include a NaN, an infinity or
// a magnitude beyond DivergedBound.
func Diverged[T float32 | float64](row []T) bool {
	for _, v := range row {
		if f := float64(v); math.IsNaN(f) || math.Abs(f) > DivergedBound {
			return true
		}
	}
	return false
}

// Trajectory holds the states at recorded times.
type Trajectory struct {
	Times  []float64   // the times actually recorded (grid times for fixed-step methods)
	States [][]float64 // States[k] is n×(blocks·d) at Times[k]
}

// run is the state of one chunk's integration.
type run struct {
	sde    *hold.SDE
	score  hold.Scorer
	grid   []float64
	d      int
	noise  noiseSource
	rec    *recorder
	nfe    int
	times  []float64 // scratch: per-sample times
	scores []float64 // scratch: B×d scores
}

func (r *run) blocks() int { return r.sde.Blocks() }

// evalScore writes the last-block score at time t for all samples into r.scores and counts one NFE.
func (r *run) evalScore(x []float64, batch int, t float64) ([]float64, error) {
	times := r.times[:batch]
	for i := range times {
		times[i] = t
	}
	sc := r.scores[:batch*r.d]
	if err := r.score.Score(sc, x[:batch*r.blocks()*r.d], times); err != nil {
		return nil, fmt.Errorf("sample: score at t = %g: %w", t, err)
	}
	r.nfe++
	return sc, nil
}

// noiseSource supplies the standard normal draws of a step. Samplers draw through it so that exact
// moment propagation (PropagateMoments) can substitute unit vectors.
type noiseSource interface {
	fill(dst []float64)
}

type rngNoise struct{ r *rng.RNG }

func (n rngNoise) fill(dst []float64) {
	for i := range dst {
		dst[i] = n.r.Normal()
	}
}

// validate checks the sampler's fields.
func (s *Sampler) validate() error {
	switch {
	case s.SDE == nil || s.Score == nil || s.Method == nil:
		return errors.New("sample: sampler needs an SDE, a score and a method")
	case s.Dim < 1:
		return fmt.Errorf("sample: data dimension %d < 1", s.Dim)
	case s.MaxBatch < 0 || s.Workers < 0:
		return fmt.Errorf("sample: negative max batch (%d) or workers (%d)", s.MaxBatch, s.Workers)
	}
	if err := checkGrid(s.Grid); err != nil {
		return err
	}
	for _, t := range s.Record {
		if !(t > 0) {
			return fmt.Errorf("sample: record time %g, want > 0", t)
		}
	}
	return nil
}

func (s *Sampler) newRun(batch int, noise noiseSource) *run {
	return &run{
		sde: s.SDE, score: s.Score, grid: s.Grid, d: s.Dim, noise: noise,
		times: make([]float64, batch), scores: make([]float64, batch*s.Dim),
	}
}

// Run integrates the given states x (batch×n·d, at time Grid[0]) in place to the end of the grid,
// drawing noise from r, and applies the denoising step if set. It returns the NFE and the trajectory
// (nil unless Record is set). It does not chunk.
func (s *Sampler) Run(x []float64, batch int, r *rng.RNG) (int, *Trajectory, error) {
	if err := s.validate(); err != nil {
		return 0, nil, err
	}
	if batch < 1 || len(x) != batch*s.SDE.Blocks()*s.Dim {
		return 0, nil, fmt.Errorf("sample: %d state values for batch %d with n = %d, d = %d", len(x), batch, s.SDE.Blocks(), s.Dim)
	}
	m, err := s.prepared()
	if err != nil {
		return 0, nil, err
	}
	return s.runWith(m, x, batch, rngNoise{r})
}

// preparer is a method that precomputes per-grid coefficients (the x̂₀ samplers).
type preparer interface {
	prepare(sde *hold.SDE, grid []float64) (Method, error)
}

// readouter is a method with its own final denoising step (the x̂₀ samplers' read-out).
type readouter interface {
	readout(r *run, x []float64, batch int) error
}

// prepared returns the method with its per-grid coefficients computed once for all chunks.
func (s *Sampler) prepared() (Method, error) {
	p, ok := s.Method.(preparer)
	if !ok {
		return s.Method, nil
	}
	m, err := p.prepare(s.SDE, s.Grid)
	if err != nil {
		return nil, fmt.Errorf("sample: %s: %w", s.Method.Name(), err)
	}
	return m, nil
}

func (s *Sampler) run(x []float64, batch int, noise noiseSource) (int, *Trajectory, error) {
	m, err := s.prepared()
	if err != nil {
		return 0, nil, err
	}
	return s.runWith(m, x, batch, noise)
}

func (s *Sampler) runWith(method Method, x []float64, batch int, noise noiseSource) (int, *Trajectory, error) {
	ru := s.newRun(batch, noise)
	if len(s.Record) > 0 {
		ru.rec = newRecorder(s.Record, s.Grid, len(x))
		ru.rec.offer(s.Grid[0], x)
	}
	if err := method.integrate(ru, x, batch); err != nil {
		return ru.nfe, nil, fmt.Errorf("sample: %s: %w", method.Name(), err)
	}
	if s.Denoise {
		if ro, ok := method.(readouter); ok {
			if err := ro.readout(ru, x, batch); err != nil {
				return ru.nfe, nil, err
			}
		} else if err := denoise(ru, x, batch); err != nil {
			return ru.nfe, nil, err
		}
	}
	var traj *Trajectory
	if ru.rec != nil {
		traj = ru.rec.trajectory()
	}
	return ru.nfe, traj, nil
}

// denoise applies x ← x + ε·ReverseDrift(x, ε) at the grid's end time ε.
func denoise(r *run, x []float64, batch int) error {
	eps := r.grid[len(r.grid)-1]
	sc, err := r.evalScore(x, batch, eps)
	if err != nil {
		return err
	}
	drift := make([]float64, len(x))
	if err := r.sde.ReverseDrift(drift, x, sc, r.times[:batch]); err != nil {
		return fmt.Errorf("sample: denoise: %w", err)
	}
	for i := range x {
		x[i] += eps * drift[i]
	}
	return nil
}

// ChunkSeed returns the seed of chunk c of a run seeded with seed (a SplitMix64 step of both, so that
// neighbouring seeds and chunks give unrelated streams).
func ChunkSeed(seed uint64, chunk int) uint64 {
	z := seed + 0x9e3779b97f4a7c15*uint64(chunk+1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Sample draws n samples: per chunk of at most MaxBatch samples the Philox streams keyed by
// ChunkSeed(seed, c) give the prior states, then the method's noise (philox.go). Memory is bounded by the chunk size times the number
// of workers (plus the output and any recorded trajectory).
func (s *Sampler) Sample(n int, seed uint64) (*Result, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("sample: want at least one sample, got %d", n)
	}
	method, err := s.prepared()
	if err != nil {
		return nil, err
	}
	maxBatch := s.MaxBatch
	if maxBatch == 0 {
		maxBatch = DefaultMaxBatch
	}
	row := s.SDE.Blocks() * s.Dim
	chunks := (n + maxBatch - 1) / maxBatch
	res := &Result{X: make([]float64, n*row), ChunkNFE: make([]int, chunks)}
	trajs := make([]*Trajectory, chunks)
	errs := make([]error, chunks)
	work := func(w *Sampler, c int) {
		lo, hi := c*maxBatch, min(n, (c+1)*maxBatch)
		batch := hi - lo
		x := res.X[lo*row : hi*row]
		key := ChunkSeed(seed, c)
		philoxPrior(s.SDE, x, batch, key)
		res.ChunkNFE[c], trajs[c], errs[c] = w.runWith(method, x, batch, &philoxNoise{key: key})
	}
	workers := max(1, min(s.Workers, chunks))
	if workers == 1 {
		for c := range chunks {
			work(s, c)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int)
		for k := range workers {
			w := s
			if f, ok := s.Score.(Forker); ok && k > 0 {
				w = s.withScore(f.Fork())
			}
			parallel.Go(&wg, func() {
				for c := range next {
					work(w, c)
				}
			})
		}
		for c := range chunks {
			next <- c
		}
		close(next)
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, v := range res.ChunkNFE {
		res.NFE = max(res.NFE, v)
	}
	for i := range n {
		if Diverged(res.X[i*row : (i+1)*row]) {
			res.Diverged++
		}
	}
	if trajs[0] != nil {
		res.Trajectory = &Trajectory{Times: trajs[0].Times, States: make([][]float64, len(trajs[0].Times))}
		for k := range res.Trajectory.States {
			all := make([]float64, 0, n*row)
			for _, tr := range trajs {
				all = append(all, tr.States[k]...)
			}
			res.Trajectory.States[k] = all
		}
	}
	return res, nil
}

// recorder stores copies of the state at requested times.
type recorder struct {
	want   []float64 // requested times, in the order given
	target []float64 // the time recorded for each request (grid time or the request itself)
	states [][]float64
	size   int
}

// newRecorder maps each requested time to the first grid time ≤ it (or the end of the grid).
func newRecorder(want, grid []float64, size int) *recorder {
	rec := &recorder{want: want, target: make([]float64, len(want)), states: make([][]float64, len(want)), size: size}
	for k, t := range want {
		rec.target[k] = grid[len(grid)-1]
		for _, g := range grid {
			if g <= t*(1+1e-12) {
				rec.target[k] = g
				break
			}
		}
	}
	return rec
}

// exact makes the recorder keep the requested times themselves (for the adaptive solver, which lands on
// them); times outside the grid's range are clamped to it.
func (rec *recorder) exact(start, end float64) {
	for k, t := range rec.want {
		rec.target[k] = math.Max(end, math.Min(start, t))
	}
}

// offer records x if t is a target time not yet recorded.
func (rec *recorder) offer(t float64, x []float64) {
	if rec == nil {
		return
	}
	for k, target := range rec.target {
		if rec.states[k] == nil && math.Abs(t-target) <= 1e-12*math.Max(1, math.Abs(t)) {
			rec.states[k] = append([]float64(nil), x[:rec.size]...)
		}
	}
}

// stops returns the target times strictly inside (end, start), decreasing (for the adaptive solver).
func (rec *recorder) stops(start, end float64) []float64 {
	if rec == nil {
		return nil
	}
	var out []float64
	for _, t := range rec.target {
		if t < start && t > end {
			out = append(out, t)
		}
	}
	// insertion sort, decreasing; few entries
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] > out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (rec *recorder) trajectory() *Trajectory {
	tr := &Trajectory{Times: append([]float64(nil), rec.target...), States: rec.states}
	for k := range tr.States {
		if tr.States[k] == nil { // unreachable for valid grids; keep the shape
			tr.States[k] = make([]float64, rec.size)
		}
	}
	return tr
}

// integrateSteps runs a fixed-step method over the grid and records after every step.
func integrateSteps(st stepper, r *run, x []float64, batch int) error {
	for i := 0; i+1 < len(r.grid); i++ {
		t, h := r.grid[i], r.grid[i]-r.grid[i+1]
		if err := st.step(r, x, batch, t, h); err != nil {
			return fmt.Errorf("step %d (t = %g, h = %g): %w", i, t, h, err)
		}
		r.rec.offer(r.grid[i+1], x)
	}
	return nil
}
