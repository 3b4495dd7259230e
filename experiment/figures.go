package experiment

import (
	"fmt"
	"image/color"
	"math"
	"runtime"
	"slices"
	"strings"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/plot"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// The maths of holdctl plot's figures: closed-form marginal densities, sampled paths and the panels
// of the paper's Figures 1, 4, 5 and 8–9; package plot draws them.

// MarginalGrid is the closed-form density of block j of the forward-diffused 1-D mixture at the
// times (cell centres), averaged over cells of the positions xs (so that modes narrower than a cell
// are not missed): under component k the block is N(a_j m_k, Σ_jj + σ_k² a_j²).
func MarginalGrid(sde *hold.SDE, mix data.Mixture, block int, times, xs []float64) plot.Grid {
	g := plot.Grid{T: times, X: xs, Z: make([]float64, len(times)*len(xs))}
	half := (xs[1] - xs[0]) / 2
	var wsum float64
	for _, w := range mix.Weights {
		wsum += w
	}
	for i, t := range times {
		k := sde.Kernel(t)
		a, v := k.Mean.At(block, 0), k.Sigma.At(block, block)
		for c, w := range mix.Weights {
			mu, sd := a*mix.Means[c], math.Sqrt(v+mix.Stds[c]*mix.Stds[c]*a*a)
			for j, x := range xs {
				lo, hi := (x-half-mu)/sd, (x+half-mu)/sd
				g.Z[i*len(xs)+j] += w / wsum * (data.NormalCDF(hi) - data.NormalCDF(lo)) / (2 * half)
			}
		}
	}
	return g
}

// Cells returns n evenly spaced cell centres covering [lo, hi].
func Cells(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (float64(i)+0.5)*(hi-lo)/float64(n)
	}
	return out
}

// TracePaths runs spec's sampler from prior draws and returns the recorded times (decreasing) and the
// states (n × blocks·d) at each: every grid time for fixed-step methods, 200 evenly spaced times for
// the adaptive ODE.
func TracePaths(m *train.Model, spec sample.Spec, n int, seed uint64) ([]float64, [][]float64, error) {
	s, err := spec.Build(m.SDE, m.Score, m.Source.Dimension())
	if err != nil {
		return nil, nil, err
	}
	if spec.Method == "ode" {
		s.Record = Cells(spec.End, m.SDE.Horizon(), 200)
		s.Record = append(s.Record, spec.End, m.SDE.Horizon())
		slices.Sort(s.Record)
		slices.Reverse(s.Record)
	} else {
		s.Record = s.Grid
	}
	res, err := s.Sample(n, seed)
	if err != nil {
		return nil, nil, err
	}
	return res.Trajectory.Times, res.Trajectory.States, nil
}

// BlockPaths extracts block j of 1-D trajectories as heat-map paths.
func BlockPaths(times []float64, states [][]float64, n, blocks, j int) []plot.Path {
	paths := make([]plot.Path, n)
	for i := range paths {
		paths[i] = plot.Path{T: times, X: make([]float64, len(times))}
		for k := range times {
			paths[i].X[k] = states[k][i*blocks+j]
		}
	}
	return paths
}

// SDETitle names an SDE in figures.
func SDETitle(sde *hold.SDE) string {
	if cfg := sde.Config(); cfg.Kind == hold.KindHOLD {
		return fmt.Sprintf("HOLD-%d", cfg.Order)
	}
	return strings.ToUpper(sde.Config().Kind)
}

// FlowPanel is one panel of Figure 1 (holdctl plot flow) for SDE kind: the density of q over time under
// the exact score of the paper's 1-D mixture and paths probability-flow ODE paths (rtol = atol = tol)
// from prior draws of seed.
func FlowPanel(kind string, paths int, tol float64, seed uint64) (plot.HeatPanel, error) {
	m, err := train.Oracle1D(kind, 0)
	if err != nil {
		return plot.HeatPanel{}, err
	}
	spec := sample.Spec{Method: "ode", Grid: sample.GridUniform, End: hold.DefaultEndTime(kind), Tol: tol}
	times, states, err := TracePaths(m, spec, paths, seed)
	if err != nil {
		return plot.HeatPanel{}, fmt.Errorf("plot flow %s: %w", kind, err)
	}
	lim := math.Max(1.2, 3.5*math.Sqrt(m.SDE.PriorVariance(0)))
	grid := MarginalGrid(m.SDE, data.PaperMixture(), 0, Cells(0, m.SDE.Horizon(), 300), Cells(-lim, lim, 300))
	return plot.HeatPanel{Grid: grid, Paths: BlockPaths(times, states, paths, m.SDE.Blocks(), 0),
		Opt: plot.HeatmapOptions{Title: SDETitle(m.SDE) + ": density of q and ODE paths",
			YLabel: "q", Width: 560, Height: 460, ColumnNormalize: true,
			LineColor: color.NRGBA{R: 255, G: 255, B: 255, A: 220}, LineWidth: 0.8}}, nil
}

// FlowFigure writes Figure 1 (holdctl plot flow) to path: a row of FlowPanels, one per SDE kind in order.
func FlowFigure(path string, kinds []string, paths int, tol float64, seed uint64) error {
	var panels []plot.HeatPanel
	for _, kind := range kinds {
		p, err := FlowPanel(kind, paths, tol, seed)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	if err := plot.HeatmapRow(path, panels); err != nil {
		return fmt.Errorf("plot flow: %w", err)
	}
	return nil
}

// BlocksModel is what Figure 4 draws: the oracle of HOLD-order on the paper's 1-D mixture and the
// sampler method with steps steps on the quadratic grid to HOLD's end time (rtol = atol = 1e-5 for the
// adaptive ODE). An unknown method or order is an error.
func BlocksModel(method string, steps, order int) (*train.Model, sample.Spec, error) {
	spec := sample.Spec{Method: method, Steps: steps, Grid: sample.GridQuadratic, End: hold.DefaultEndTime(hold.KindHOLD), Tol: 1e-5}
	if _, err := sample.Lookup(method); err != nil {
		return nil, spec, err
	}
	m, err := train.Oracle1D(hold.KindHOLD, order)
	return m, spec, err
}

// BlocksFigure writes Figure 4 (holdctl plot blocks) to path: a row of BlockPanels.
func BlocksFigure(path string, m *train.Model, spec sample.Spec, paths int, seed uint64) error {
	panels, err := BlockPanels(m, spec, paths, seed)
	if err != nil {
		return fmt.Errorf("plot blocks: %w", err)
	}
	if err := plot.HeatmapRow(path, panels); err != nil {
		return fmt.Errorf("plot blocks: %w", err)
	}
	return nil
}

// BlockPanels are the panels of Figure 4 (holdctl plot blocks): for each block of m's state (an oracle
// of the paper's 1-D mixture) its closed-form density over time and the paths of that block recorded
// along spec's sampler from paths prior draws of seed.
func BlockPanels(m *train.Model, spec sample.Spec, paths int, seed uint64) ([]plot.HeatPanel, error) {
	times, states, err := TracePaths(m, spec, paths, seed)
	if err != nil {
		return nil, err
	}
	names := []string{"position q", "velocity p", "acceleration s", "jerk (4th block)"}
	colors := []color.Color{
		color.NRGBA{R: 255, G: 255, B: 255, A: 220}, color.NRGBA{R: 255, G: 230, B: 0, A: 220},
		color.NRGBA{R: 0, G: 230, B: 60, A: 220}, color.NRGBA{R: 0, G: 220, B: 255, A: 220},
	}
	mix := data.PaperMixture()
	var panels []plot.HeatPanel
	for j := range m.SDE.Blocks() {
		lim := math.Max(1.2, 3.5*math.Sqrt(m.SDE.PriorVariance(j)))
		ps := BlockPaths(times, states, paths, m.SDE.Blocks(), j)
		for _, p := range ps {
			for _, v := range p.X {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lim = math.Max(lim, 1.05*math.Abs(v))
				}
			}
		}
		grid := MarginalGrid(m.SDE, mix, j, Cells(0, m.SDE.Horizon(), 300), Cells(-lim, lim, 300))
		panels = append(panels, plot.HeatPanel{Grid: grid, Paths: ps,
			Opt: plot.HeatmapOptions{Title: fmt.Sprintf("HOLD-%d %s (%s paths)", m.SDE.Blocks(), names[j], spec.Method),
				YLabel: strings.Fields(names[j])[1], Width: 520, Height: 440, ColumnNormalize: true,
				LineColor: colors[j], LineWidth: 0.7}})
	}
	return panels, nil
}

// SwissMixture is a 2-D Gaussian mixture laid along the paper's five Swiss rolls (perRoll components
// per roll, evenly spaced in arc length, equally weighted, standard deviation std): data with an exact oracle score that
// looks like the multi Swiss roll.
func SwissMixture(perRoll int, std float64) hold.Mixture {
	roll := data.PaperSwissRoll()
	var mix hold.Mixture
	for _, c := range roll.Centers {
		// t = 1.5π(1 + 2u); points spaced evenly in arc length (∝ t²) along the spiral
		lo, hi := 1.5*math.Pi, 4.5*math.Pi
		for k := range perRoll {
			u := (float64(k) + 0.5) / float64(perRoll)
			t := math.Sqrt(lo*lo + u*(hi*hi-lo*lo))
			mix.Means = append(mix.Means, []float64{c[0] + roll.Scale*t*math.Cos(t), c[1] + roll.Scale*t*math.Sin(t)})
			mix.Weights = append(mix.Weights, 1/float64(perRoll*len(roll.Centers)))
			mix.Stds = append(mix.Stds, std)
		}
	}
	return mix
}

// MomentsModel returns the trained model of a --cld/--hold flag (checked to be of kind on 2-D data) or
// the oracle of the Swiss-roll mixture, and a label saying which.
func MomentsModel(kind, ckpt string) (*train.Model, string, error) {
	if ckpt != "" {
		m, err := train.LoadModelOf(kind, ckpt)
		if err != nil {
			return nil, "", err
		}
		if m.Source.Dimension() != 2 {
			return nil, "", fmt.Errorf("--%s %s: a model of %d-D data (%s); the figure needs 2-D data", kind, ckpt, m.Source.Dimension(), m.Config.Data)
		}
		return m, "trained", nil
	}
	sde, err := hold.New(hold.DefaultConfig(kind))
	if err != nil {
		return nil, "", err
	}
	mix := SwissMixture(20, 0.012)
	orc, err := hold.NewMixtureOracle(sde, mix)
	if err != nil {
		return nil, "", err
	}
	return &train.Model{Config: train.OracleRunConfig(sde.Config(), "swiss-roll mixture"), SDE: sde, Score: orc, Source: data.FromHold(mix)}, "oracle", nil
}

// MomentsRow is one row of Figure 5: an SDE kind, its model and label (MomentsModel) and its
// Lie–Trotter sampler.
type MomentsRow struct {
	Kind, Label string
	Model       *train.Model
	Sampler     *sample.Sampler
}

// MomentsRows returns Figure 5's rows, CLD and HOLD, from their checkpoints (run directories on 2-D
// data; "": the oracle, MomentsModel), each with a Lie–Trotter sampler of steps steps on grid to the
// kind's default end time. Every error is about the input.
func MomentsRows(cldCkpt, holdCkpt string, steps int, grid string) ([]MomentsRow, error) {
	var rows []MomentsRow
	for _, kind := range []string{hold.KindCLD, hold.KindHOLD} {
		ckpt := cldCkpt
		if kind == hold.KindHOLD {
			ckpt = holdCkpt
		}
		m, label, err := MomentsModel(kind, ckpt)
		if err != nil {
			return nil, err
		}
		rows = append(rows, MomentsRow{Kind: kind, Label: label, Model: m})
	}
	for i, r := range rows {
		spec := sample.Spec{Method: "lt", Steps: steps, Grid: grid, End: hold.DefaultEndTime(r.Kind)}
		s, err := spec.Build(r.Model.SDE, r.Model.Score, 2)
		if err != nil {
			return nil, err
		}
		rows[i].Sampler = s
	}
	return rows, nil
}

// MomentsFigure writes Figure 5 (holdctl plot moments) to path: for each row, n samples at six moments
// of its steps steps on grid (MomentPanels), six panels a row.
func MomentsFigure(path string, rows []MomentsRow, steps, n int, grid string, seed uint64) error {
	var panels []plot.Panel
	for _, r := range rows {
		ps, err := MomentPanels(r.Model, r.Sampler, r.Label, steps, n, seed)
		if err != nil {
			return fmt.Errorf("plot moments %s: %w", r.Kind, err)
		}
		panels = append(panels, ps...)
	}
	title := fmt.Sprintf("CLD (SSCS) and HOLD (Lie–Trotter), %d samples at six moments of %d steps (%s grid)", n, steps, grid)
	if err := plot.ScatterGrid(path, panels, plot.GridOptions{Title: title, Cols: 6, PanelSize: 260, MarkerRadius: 0.6}); err != nil {
		return fmt.Errorf("plot moments: %w", err)
	}
	return nil
}

// MomentPanels samples n points of m with s (Lie–Trotter on a grid of steps steps) and returns six
// panels of Figure 5 (holdctl plot moments): the 2-D samples at evenly spaced steps from 0 to steps,
// titled with label ("oracle" or "trained"). An oracle samples on every core; networks on one.
func MomentPanels(m *train.Model, s *sample.Sampler, label string, steps, n int, seed uint64) ([]plot.Panel, error) {
	if label == "oracle" { // the oracle is safe for concurrent use; networks are not
		s.MaxBatch, s.Workers = 256, runtime.NumCPU()
	}
	moments := make([]int, 6)
	for i := range moments {
		moments[i] = int(math.Round(float64(i) * float64(steps) / 5))
	}
	s.Record = make([]float64, len(moments))
	for i, k := range moments {
		s.Record[i] = s.Grid[k]
	}
	res, err := s.Sample(n, seed)
	if err != nil {
		return nil, err
	}
	var panels []plot.Panel
	for i, k := range moments {
		panels = append(panels, plot.Panel{
			Title: fmt.Sprintf("%s (%s) step %d, t = %.3g", SDETitle(m.SDE), label, k, res.Trajectory.Times[i]),
			XY:    sample.FirstBlock(res.Trajectory.States[i], n, m.SDE.Blocks(), 2),
		})
	}
	return panels, nil
}

// TrajectoryTimes returns nt times from the grid's start to its end, evenly spaced in log σ of the
// sufficient statistic, each moved to the first grid time at or below it (where fixed-step samplers record).
func TrajectoryTimes(m *train.Model, grid []float64, nt int) ([]float64, error) {
	start, end := grid[0], grid[len(grid)-1]
	s0, err := sample.NoiseLevel(m.SDE, start)
	if err != nil {
		return nil, err
	}
	s1, err := sample.NoiseLevel(m.SDE, end)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, nt)
	for k := range nt {
		target := math.Exp(math.Log(s0) + float64(k)/float64(nt-1)*(math.Log(s1)-math.Log(s0)))
		t, err := sample.TimeAtNoiseLevel(m.SDE, target, end, start)
		if err != nil {
			t = end
		}
		pick := end
		for _, g := range grid {
			if g <= t*(1+1e-12) {
				pick = g
				break
			}
		}
		if len(out) == 0 || pick < out[len(out)-1] {
			out = append(out, pick)
		}
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("plot trajectory: the grid has too few steps for %d times", nt)
	}
	return out, nil
}

// Trajectory is the picture of the paper's Figures 8–9 (holdctl plot trajectory): every channel of
// the state of n samples of s recorded at times (TrajectoryTimes), then of the forward path from the
// first n images of test (one noise draw of seed per image for all times); rows sample by channel,
// columns times, each tile value / (2.5·std) with std the channel's marginal standard deviation (data
// variance 1/3). It returns the tiles (2·n·blocks·len(times) images of test's shape) and the sampling's
// result.
func Trajectory(m *train.Model, s *sample.Sampler, test *imagedata.Dataset, times []float64, n int, seed uint64) ([]float32, *sample.Result, error) {
	nt := len(times)
	s.Record = times
	res, err := s.Sample(n, seed)
	if err != nil {
		return nil, nil, err
	}
	blocks, d := m.SDE.Blocks(), test.Dimension()
	// Forward path: u_t = m_t q0 + L_t ε from the first n test images, one ε per image for all times.
	q0 := make([]float32, n*d)
	for i := range n {
		test.Scale(q0[i*d:(i+1)*d], test.Pixels(i), false, nil)
	}
	eps := make([]float64, n*blocks*d)
	r := rng.New(seed ^ 0xf0e1)
	for i := range eps {
		eps[i] = r.Normal()
	}
	tiles := make([]float32, 0, 2*n*blocks*nt*d)
	add := func(state func(k int) []float64) { // rows: sample, channel; columns: times
		for i := range n {
			for b := range blocks {
				for k, t := range times {
					kern := m.SDE.Kernel(t)
					mb := kern.Mean.At(b, 0)
					std := math.Sqrt(kern.Sigma.At(b, b) + mb*mb/3)
					row := state(k)[i*blocks*d+b*d : i*blocks*d+(b+1)*d]
					for _, v := range row {
						tiles = append(tiles, float32(v/(2.5*std)))
					}
				}
			}
		}
	}
	add(func(k int) []float64 { return res.Trajectory.States[k] })
	fwd := make([][]float64, nt)
	for k, t := range times {
		u := make([]float64, n*blocks*d)
		ForwardStates(u, q0, eps, m.SDE.Kernel(t), n, blocks, d)
		fwd[k] = u
	}
	add(func(k int) []float64 { return fwd[k] })
	return tiles, res, nil
}

// ForwardStates writes u = m_t q0 + L_t ε (n samples of blocks×d values) for the kernel at t.
func ForwardStates(u []float64, q0 []float32, eps []float64, kern hold.Kernel, n, blocks, d int) {
	for i := range n {
		for b := range blocks {
			for j := range d {
				v := kern.Mean.At(b, 0) * float64(q0[i*d+j])
				for e := 0; e <= b; e++ {
					v += kern.Chol.At(b, e) * eps[i*blocks*d+e*d+j]
				}
				u[i*blocks*d+b*d+j] = v
			}
		}
	}
}

// LossSeries is the training loss in a run's log (train.ReadLossLog) against the step, named name,
// each value the mean of the last smooth logged values (of all so far, at the start), thinned to at
// most maxLossPoints points.
func LossSeries(name, logPath string, smooth int) (plot.Series, error) {
	steps, loss, err := train.ReadLossLog(logPath)
	if err != nil {
		return plot.Series{}, err
	}
	s := plot.Series{Name: name}
	stride := (len(loss) + maxLossPoints - 1) / maxLossPoints
	var sum float64
	for i := range loss {
		sum += loss[i]
		if i >= smooth {
			sum -= loss[i-smooth]
		}
		if i%stride == 0 || i == len(loss)-1 {
			s.X = append(s.X, steps[i])
			s.Y = append(s.Y, sum/float64(min(i+1, smooth)))
		}
	}
	return s, nil
}

// maxLossPoints is the most points a loss line is drawn with: a longer log is thinned to every k-th
// smoothed value (and the last), since a 2,000-pixel-wide figure cannot show more and gonum's line
// drawing of 10⁷ points takes minutes.
const maxLossPoints = 20000

// LossFigure writes holdctl plot loss's figure to path: the series against the step on a log axis,
// without markers, titled title or ("") with the smoothing.
func LossFigure(path string, series []plot.Series, smooth int, title string) error {
	if title == "" {
		title = fmt.Sprintf("training loss (moving average over %d logged steps)", smooth)
	}
	return plot.LogLog(path, series, plot.LogLogOptions{Title: title, XLabel: "step", YLabel: "loss", NoMarkers: true, LinearY: true})
}
