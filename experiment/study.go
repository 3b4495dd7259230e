// Package experiment holds the study harnesses: samplers against exact scores, with the distances of
// package metrics and the data of package data (package sample stays free of both).
package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/metrics"
	"holdgo/rng"
	"holdgo/sample"
)

// StudyKinds are the SDE kinds a study sampler name may start with.
var StudyKinds = hold.Kinds

// StudyConfig configures MixtureStudy. Zero fields take the defaults in brackets.
type StudyConfig struct {
	NFEs     []int     // score evaluations per sample, denoising included [25 50 100 150 250 500 1000]
	Grids    []string  // [uniform quadratic geometric]
	Samplers []string  // "kind-method", method from Registry [DefaultStudySamplers]
	ODETols  []float64 // rtol = atol of the adaptive "ode" rows [1e-2 1e-3 1e-4 1e-5]
	Samples  int       // samples per run [20000]
	Seed     uint64
	Seeds    int // runs per cell with seeds Seed, Seed+1, …; cells report the mean [1]
	// NoDenoise drops CLD-SGM's final denoising step (by default on, and counted in the NFE).
	NoDenoise bool
	// EndTime per SDE kind [hold 1e-3, cld 1e-3, vp 1e-5 (VP with 1e-3 cannot resolve modes of width
	// 0.01: they come out about 0.63× too narrow; docs/math.md#euler-maruyama-and-ode-steppers)].
	EndTime map[string]float64
	// SigmaMin is the noise level σ of the sufficient statistic at which the σ-grids (edm, vpmatched, lambda, vplambda)
	// end [sample.DefaultSigmaMin].
	SigmaMin  float64
	FloorReps int // Monte-Carlo floor replicates [5]
	Workers   int // chunks in parallel [1]
}

// StudyPoint is one run.
type StudyPoint struct {
	NFE   int
	Steps int
	Tol   float64 // adaptive runs only
	W1    float64 // mean over the seeds; NaN if the sampler diverged
	W1SD  float64 // standard deviation over the seeds
	Width float64 // mean over the modes of (std of the samples assigned to the mode)/(its true std)
	// WidthDev is the largest |width ratio − 1| over the modes (each mode's ratio averaged over seeds).
	WidthDev float64
	// PathErr is the RMS distance (mean over the seeds) of the samples from those of the converged flow
	// the sampler discretises (sample.ConvergedFlow at rtol = atol = PathRefTol) started from the same
	// prior draws and ending at the same time: the sampler's own error, free of the Monte-Carlo noise
	// that floors W1. NaN for the stochastic samplers, which have no such flow.
	PathErr float64
	// Err is why the run failed (one line; W1 and the widths are then NaN), "" when it ran. A sampler
	// that fails (its coefficients, its grid or a step) yields such a point and the study goes on.
	Err string
}

// StudyRow is one sampler on one grid (Grid "adaptive" for the ODE solver).
type StudyRow struct {
	Sampler, Grid string
	Points        []StudyPoint
}

// Table is the result of MixtureStudy.
type Table struct {
	Config StudyConfig
	Rows   []StudyRow
	// FloorMean and FloorSD are the mean and standard deviation of W1 for exact samples of the same size
	// over Config.FloorReps replicates: the Monte-Carlo floor.
	FloorMean, FloorSD float64
}

func (c *StudyConfig) fill() {
	if len(c.NFEs) == 0 {
		c.NFEs = []int{25, 50, 100, 150, 250, 500, 1000}
	}
	if len(c.Grids) == 0 {
		c.Grids = slices.Clone(sample.GridKinds)
	}
	if len(c.Samplers) == 0 {
		c.Samplers = slices.Clone(DefaultStudySamplers)
	}
	if len(c.ODETols) == 0 {
		c.ODETols = []float64{1e-2, 1e-3, 1e-4, 1e-5}
	}
	if c.Samples == 0 {
		c.Samples = 20000
	}
	if c.Seeds == 0 {
		c.Seeds = 1
	}
	if c.FloorReps == 0 {
		c.FloorReps = 5
	}
	ends := map[string]float64{} // no VE default: the study's VE runs need --end-time ve=t
	for _, k := range []string{hold.KindHOLD, hold.KindCLD, hold.KindVP} {
		ends[k] = hold.DefaultEndTime(k)
	}
	for k, v := range c.EndTime {
		ends[k] = v
	}
	c.EndTime = ends
}

// ParamError is an error of a study's parameters: an unknown sampler or grid.
type ParamError struct{ Err error }

func (e *ParamError) Error() string { return e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

// StudyMethod returns the SDE kind, the method and the NFE per step of a study sampler name; an
// unknown name is a *ParamError.
func StudyMethod(name string) (kind string, m sample.Method, perStep int, err error) {
	kind, method, ok := strings.Cut(name, "-")
	if !ok || !slices.Contains(StudyKinds, kind) {
		return "", nil, 0, &ParamError{fmt.Errorf("experiment: unknown study sampler %q (want kind-method, kind one of %s)", name, strings.Join(StudyKinds, ", "))}
	}
	m, perStep, err = sample.NewMethod(method, sample.Options{})
	if err != nil {
		return "", nil, 0, &ParamError{fmt.Errorf("experiment: unknown study sampler %q: %w", name, err)}
	}
	return kind, m, perStep, nil
}

// MixtureStudy measures the W1 distance to the paper's 1-D three-component mixture (exact, via
// metrics.W1Mixture) and the within-mode width ratio against NFE, for each sampler on each grid with the
// exact score (hold.MixtureOracle), next to the Monte-Carlo floor of exact samples of the same size.
// Every run uses the same seed. A sampler that diverges (NaN or Inf) gets W1 = NaN; one that fails
// (an error from its grid, its coefficients or a step) gets a point with Err set, and the study goes on
// with the other runs. The error return is for a configuration that cannot run at all (an unknown
// sampler or grid name, a *ParamError; an SDE without an end time); Table.Failures counts the failed runs.
func MixtureStudy(cfg StudyConfig) (*Table, error) {
	cfg.fill()
	for _, g := range cfg.Grids {
		if !slices.Contains(sample.GridKinds, g) {
			return nil, &ParamError{fmt.Errorf("unknown grid %q (want %s)", g, strings.Join(sample.GridKinds, ", "))}
		}
	}
	mixHold, mixData := hold.PaperMixture(), data.PaperMixture()
	tab := &Table{Config: cfg}
	sdes := map[string]*hold.SDE{}
	refs := pathRefs{}
	for _, name := range cfg.Samplers {
		kind, method, perStep, err := StudyMethod(name)
		if err != nil {
			return nil, err
		}
		sde := sdes[kind]
		if sde == nil {
			if sde, err = hold.New(hold.DefaultConfig(kind)); err != nil {
				return nil, err
			}
			sdes[kind] = sde
		}
		orc, err := hold.NewMixtureOracle(sde, mixHold)
		if err != nil {
			return nil, err
		}
		end, ok := cfg.EndTime[kind]
		if !ok {
			return nil, fmt.Errorf("experiment: no end time for %s", kind)
		}
		extra := 1
		if cfg.NoDenoise {
			extra = 0
		}
		_, methodName, _ := strings.Cut(name, "-")
		flow := sample.ConvergedFlow(methodName)
		runOne := func(m sample.Method, grid []float64) (StudyPoint, error) {
			s := &sample.Sampler{SDE: sde, Score: orc, Method: m, Grid: grid, Dim: 1, Denoise: !cfg.NoDenoise, Workers: cfg.Workers}
			pt := StudyPoint{Steps: len(grid) - 1, W1: math.NaN(), Width: math.NaN(), WidthDev: math.NaN(), PathErr: math.NaN()}
			var w1s, paths []float64
			widths := make([]float64, mixData.Components())
			for rep := range cfg.Seeds {
				res, err := s.Sample(cfg.Samples, cfg.Seed+uint64(rep))
				if err != nil {
					return StudyPoint{}, err
				}
				pt.NFE = res.NFE
				q := make([]float32, cfg.Samples)
				for i := range q {
					q[i] = float32(res.X[i*sde.Blocks()])
				}
				w1, err := metrics.W1Mixture(q, mixData)
				if err != nil {
					return pt, nil // diverged
				}
				w1s = append(w1s, w1)
				if flow != "" {
					ref, err := refs.samples(sde, orc, kind, flow, grid[0], grid[len(grid)-1], !cfg.NoDenoise, cfg, cfg.Seed+uint64(rep))
					if err != nil {
						return StudyPoint{}, err
					}
					paths = append(paths, rmsDiff(q, ref))
				}
				for c, v := range modeWidths(q, mixData) {
					widths[c] += v / float64(cfg.Seeds)
				}
			}
			st := sample.MeanSE(w1s)
			pt.W1, pt.W1SD = st.Mean, st.SE*math.Sqrt(float64(len(w1s)))
			if len(paths) > 0 {
				pt.PathErr = sample.MeanSE(paths).Mean
			}
			pt.Width, pt.WidthDev = 0, 0
			for _, v := range widths {
				pt.Width += v / float64(len(widths))
				pt.WidthDev = math.Max(pt.WidthDev, math.Abs(v-1))
			}
			return pt, nil
		}
		if perStep == 0 {
			row := StudyRow{Sampler: name, Grid: "adaptive"}
			for _, tol := range cfg.ODETols {
				// The adaptive solver the name asks for (ode: the probability-flow ODE; a-ode: the aligned
				// gauge's), at this row's tolerance.
				m, _, err := sample.NewMethod(methodName, sample.Options{Tol: tol})
				pt := StudyPoint{}
				if err == nil {
					pt, err = runOne(m, []float64{sde.Horizon(), end})
				}
				if err != nil {
					pt = failedPoint(0, fmt.Errorf("experiment: study %s at tolerance %g: %w", name, tol, err))
				}
				pt.Tol, pt.Steps = tol, 0
				row.Points = append(row.Points, pt)
			}
			tab.Rows = append(tab.Rows, row)
			continue
		}
		for _, g := range cfg.Grids {
			row := StudyRow{Sampler: name, Grid: g}
			for _, nfe := range cfg.NFEs {
				steps := (nfe - extra) / perStep
				if steps < 1 {
					continue
				}
				grid, err := studyGrid(sde, g, end, cfg.SigmaMin, steps)
				pt := StudyPoint{}
				if err == nil {
					pt, err = runOne(method, grid)
				}
				if err != nil {
					pt = failedPoint(steps, fmt.Errorf("experiment: study %s on the %s grid at NFE %d: %w", name, g, nfe, err))
					pt.NFE = nfe
				}
				row.Points = append(row.Points, pt)
			}
			tab.Rows = append(tab.Rows, row)
		}
	}
	floor := make([]float64, cfg.FloorReps)
	q := make([]float32, cfg.Samples)
	for i := range floor {
		mixData.Sample(rng.New(sample.ChunkSeed(cfg.Seed^0xf100, i)), q)
		w1, err := metrics.W1Mixture(q, mixData)
		if err != nil {
			return nil, err
		}
		floor[i] = w1
	}
	st := sample.MeanSE(floor)
	tab.FloorMean, tab.FloorSD = st.Mean, st.SE*math.Sqrt(float64(len(floor)))
	return tab, nil
}

// PathRefTol is the rtol = atol of the converged flows that the study's path errors are measured
// against.
const PathRefTol = 1e-10

// pathRefs caches the q of the converged flows' samples by SDE, flow, grid ends and seed.
type pathRefs map[string][]float32

// samples returns the q of the converged flow's samples from start to end for one seed: the same
// prior draws as a study run with that seed (the sampler draws them first, whatever the method).
func (p pathRefs) samples(sde *hold.SDE, orc hold.Scorer, kind, flow string, start, end float64, denoise bool, cfg StudyConfig, seed uint64) ([]float32, error) {
	key := fmt.Sprint(kind, flow, start, end, denoise, seed)
	if q, ok := p[key]; ok {
		return q, nil
	}
	m, _, err := sample.NewMethod(flow, sample.Options{Tol: PathRefTol})
	if err != nil {
		return nil, err
	}
	s := &sample.Sampler{SDE: sde, Score: orc, Method: m, Grid: []float64{start, end}, Dim: 1, Denoise: denoise, Workers: cfg.Workers}
	res, err := s.Sample(cfg.Samples, seed)
	if err != nil {
		return nil, fmt.Errorf("experiment: the converged %s reference of the path errors: %w", flow, err)
	}
	q := make([]float32, cfg.Samples)
	for i := range q {
		q[i] = float32(res.X[i*sde.Blocks()])
	}
	p[key] = q
	return q, nil
}

// rmsDiff is the root mean square of a − b.
func rmsDiff(a, b []float32) float64 {
	var sum float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		sum += d * d
	}
	return math.Sqrt(sum / float64(len(a)))
}

// failedPoint is the point of a run that failed: its error on one line, every measure NaN.
func failedPoint(steps int, err error) StudyPoint {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	return StudyPoint{Steps: steps, W1: math.NaN(), W1SD: math.NaN(), Width: math.NaN(), WidthDev: math.NaN(), PathErr: math.NaN(), Err: msg}
}

// FirstFailure returns the error of the study's first failed run ("" when every run completed).
func (t *Table) FirstFailure() string {
	for _, r := range t.Rows {
		for _, p := range r.Points {
			if p.Err != "" {
				return p.Err
			}
		}
	}
	return ""
}

// Failures returns the number of runs (points) that failed and the number of runs in all.
func (t *Table) Failures() (failed, total int) {
	for _, r := range t.Rows {
		for _, p := range r.Points {
			total++
			if p.Err != "" {
				failed++
			}
		}
	}
	return failed, total
}

// modeWidths assigns each sample to its most probable component and returns per component
// (std of the assigned samples)/(component std); NaN for a component with fewer than 2 samples.
func modeWidths(q []float32, m data.Mixture) []float64 {
	k := m.Components()
	sum, sumSq, count := make([]float64, k), make([]float64, k), make([]float64, k)
	for _, v := range q {
		x := float64(v)
		best, bestLog := 0, math.Inf(-1)
		for c := 0; c < k; c++ {
			z := (x - m.Means[c]) / m.Stds[c]
			if l := math.Log(m.Weights[c]/m.Stds[c]) - 0.5*z*z; l > bestLog {
				best, bestLog = c, l
			}
		}
		sum[best] += x
		sumSq[best] += x * x
		count[best]++
	}
	out := make([]float64, k)
	for c := range out {
		if count[c] < 2 {
			out[c] = math.NaN()
			continue
		}
		mean := sum[c] / count[c]
		variance := (sumSq[c] - count[c]*mean*mean) / (count[c] - 1)
		out[c] = math.Sqrt(math.Max(variance, 0)) / m.Stds[c]
	}
	return out
}

// studyGrid is the grid of a study's cell: σ-grids end at sigmaMin (0: sample.DefaultSigmaMin), the
// others at the SDE's end time.
func studyGrid(sde *hold.SDE, kind string, end, sigmaMin float64, steps int) ([]float64, error) {
	if sample.IsSigmaGrid(kind) {
		if sigmaMin == 0 {
			sigmaMin = sample.DefaultSigmaMin
		}
		return sample.NewSigmaGrid(sde, kind, sde.Horizon(), sigmaMin, steps)
	}
	return sample.NewSDEGrid(sde, kind, sde.Horizon(), end, steps)
}

// WriteMarkdown writes one table per grid (rows: samplers; columns: NFE; cells: W1 ×10³ and the
// within-mode width ratio) and the adaptive ODE rows, with the Monte-Carlo floor.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "W1 to the paper's 1-D mixture (×10⁻³, mean over %d seeds from %d) and the largest |mode width ratio − 1| over the modes; for deterministic samplers, `path` is the RMS distance ×10⁻³ of the samples from their converged flow's from the same prior draws (rtol %g); %d samples per run, final step %v.\n",
		t.Config.Seeds, t.Config.Seed, PathRefTol, t.Config.Samples, !t.Config.NoDenoise)
	fmt.Fprintf(&b, "Monte-Carlo floor (exact samples, %d replicates): W1 = %.2f ± %.2f ×10⁻³ (mean ± sd).\n\n", t.Config.FloorReps, 1e3*t.FloorMean, 1e3*t.FloorSD)
	for _, g := range t.Config.Grids {
		var rows []StudyRow
		for _, r := range t.Rows {
			if r.Grid == g {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "Grid: %s\n\n| sampler |", g)
		for _, nfe := range t.Config.NFEs {
			fmt.Fprintf(&b, " NFE %d |", nfe)
		}
		b.WriteString("\n|---|")
		for range t.Config.NFEs {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		var errs []string
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s |", r.Sampler)
			for _, nfe := range t.Config.NFEs {
				cell := " – |"
				for _, p := range r.Points {
					if p.NFE == nfe {
						cell = " " + formatCell(p) + " |"
						if p.Err != "" {
							errs = append(errs, fmt.Sprintf("- %s at NFE %d: %s\n", r.Sampler, nfe, p.Err))
						}
					}
				}
				b.WriteString(cell)
			}
			b.WriteString("\n")
		}
		if len(errs) > 0 {
			b.WriteString("\nErrors:\n\n" + strings.Join(errs, ""))
		}
		b.WriteString("\n")
	}
	for _, r := range t.Rows {
		if r.Grid != "adaptive" {
			continue
		}
		fmt.Fprintf(&b, "Adaptive %s (RK45):", r.Sampler)
		for _, p := range r.Points {
			if p.Err != "" {
				fmt.Fprintf(&b, " tol %g: error (%s);", p.Tol, p.Err)
				continue
			}
			fmt.Fprintf(&b, " tol %g: NFE %d, %s;", p.Tol, p.NFE, formatCell(p))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func formatCell(p StudyPoint) string {
	if p.Err != "" {
		return "error"
	}
	if math.IsNaN(p.W1) {
		return "diverged"
	}
	if math.IsNaN(p.PathErr) {
		return fmt.Sprintf("%.2f (%.2f)", 1e3*p.W1, p.WidthDev)
	}
	return fmt.Sprintf("%.2f (%.2f; path %.3g)", 1e3*p.W1, p.WidthDev, 1e3*p.PathErr)
}

// WriteCSV writes one line per run: sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev,error,
// path_err (error empty when the run completed, otherwise its message, the measures NaN; path_err NaN for
// the samplers without a converged flow), then the floor.
func (t *Table) WriteCSV(w io.Writer) error {
	var b strings.Builder
	cw := csv.NewWriter(&b)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	records := [][]string{{"sampler", "grid", "nfe", "steps", "tol", "w1", "w1_sd", "width_ratio", "width_dev", "error", "path_err"}}
	for _, r := range t.Rows {
		for _, p := range r.Points {
			records = append(records, []string{r.Sampler, r.Grid, strconv.Itoa(p.NFE), strconv.Itoa(p.Steps), g(p.Tol),
				g(p.W1), g(p.W1SD), g(p.Width), g(p.WidthDev), p.Err, g(p.PathErr)})
		}
	}
	records = append(records, []string{"floor-mean", "exact", "0", "0", "0", g(t.FloorMean), "0", "1", "0", "", "0"},
		[]string{"floor-sd", "exact", "0", "0", "0", g(t.FloorSD), "0", "0", "0", "", "0"})
	if err := cw.WriteAll(records); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
