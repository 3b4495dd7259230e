package restore

// The restoration study of issue 46 (holdctl experiment restore, docs/restoration.md): models × tasks ×
// σ_y × methods × NFE on the same images, masks, measurements and seeds, with the Gaussian baselines
// and the paired differences between models. Every cell is one Job (Prepare), as holdctl restore runs it.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/budget"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// StudyModel is one --model.
type StudyModel struct {
	Name  string       `json:"name"`
	Dir   string       `json:"dir"`
	SDE   string       `json:"sde"`
	Model *train.Model `json:"-"` // loaded
}

// StudyTask is one --tasks entry.
type StudyTask struct {
	Name   string  `json:"name"`
	SigmaY float64 `json:"sigma_y"`
}

// StudyCell is one model's (or baseline's) result for one task, method and NFE.
type StudyCell struct {
	Task     string  `json:"task"`
	SigmaY   float64 `json:"sigma_y"`
	Method   string  `json:"method"`
	NFE      int     `json:"nfe,omitempty"`
	Model    string  `json:"model"`
	PSNR     Stat    `json:"psnr"`
	SSIM     Stat    `json:"ssim"`
	FDist    *Stat   `json:"fdist,omitempty"`
	Agree    *Stat   `json:"class_agreement,omitempty"`
	KID      *Stat   `json:"kid,omitempty"`
	Calib    *Stat   `json:"psnr_mean_of_k_gain,omitempty"`
	RMS      float64 `json:"rms_residual"`
	VJP      int     `json:"vjp,omitempty"`
	Wall     float64 `json:"wall_s"`
	Diverged int     `json:"diverged,omitempty"`
	per      PerImage
	skipped  string
	baseline bool
}

// Stat is a mean ± s.e. over images (NaNs, diverged restorations, left out).
type Stat struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
	N    int     `json:"n"`
}

func statOf(v []float64) Stat {
	var kept []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			kept = append(kept, x)
		}
	}
	if len(kept) == 0 {
		return Stat{Mean: math.NaN(), SE: math.NaN()}
	}
	s := sample.MeanSE(kept)
	return Stat{Mean: s.Mean, SE: s.SE, N: len(kept)}
}

// PairCell is the paired difference A − B of one task, method and NFE.
type PairCell struct {
	Task   string  `json:"task"`
	SigmaY float64 `json:"sigma_y"`
	Method string  `json:"method"`
	NFE    int     `json:"nfe"`
	A      string  `json:"a"`
	B      string  `json:"b"`
	PSNR   Stat    `json:"psnr"`
	SSIM   Stat    `json:"ssim"`
	FDist  *Stat   `json:"fdist,omitempty"`
	Agree  *Stat   `json:"class_agreement,omitempty"`
}

// Study is the whole study, as --format json writes it.
type Study struct {
	In      string       `json:"in"`
	First   int          `json:"first"`
	N       int          `json:"n"`
	K       int          `json:"samples_per_image"`
	Seed    uint64       `json:"seed"`
	Models  []StudyModel `json:"models"`
	Prior   string       `json:"prior,omitempty"`
	KIDRef  string       `json:"kid_ref,omitempty"`
	Cells   []*StudyCell `json:"cells"`
	Pairs   []PairCell   `json:"pairs"`
	Skipped []string     `json:"skipped,omitempty"`
	Version string       `json:"version"`
}

// StudyConfig is what a study runs besides its Study's record.
type StudyConfig struct {
	// Base holds the settings every cell shares; a cell sets the task's name and σ_y, the method, the
	// NFE and the checkpoint.
	Base       Params
	Pairs      [][2]string // the paired differences A − B (StudyPairs)
	Tasks      []StudyTask // StudyTasks
	Methods    []string
	NFEs       []int
	Classifier *layers.Classifier // nil: no feature distance, class agreement nor KID
	KIDRef     []float32          // KID's reference features (KIDReference)
	Mean, Cov  []float64          // the prior's moments (PriorMoments); nil: no baselines
	Log        io.Writer          // one line per cell
}

// Run runs every cell of cfg on s.Models (the baselines first for each task, with the first model's
// images and measurements), in the order tasks, methods, NFE, models, and adds the paired differences
// and the cells skipped with their reasons. A cell a task, method or model cannot take is skipped; a
// study of which no cell could run is an InputError.
func (s *Study) Run(cfg StudyConfig) error {
	models := s.Models
	for _, task := range cfg.Tasks {
		tp := cfg.Base
		tp.Task.Name, tp.Task.Noise = task.Name, task.SigmaY
		if cfg.Mean != nil {
			cells, err := studyBaselines(tp, models[0].Model, cfg.Mean, cfg.Cov)
			if err != nil {
				return err
			}
			if cells == nil {
				s.Skipped = append(s.Skipped, fmt.Sprintf("%s σ_y %g: baselines: the task does not apply to the images", task.Name, task.SigmaY))
			}
			s.Cells = append(s.Cells, cells...)
		}
		for _, method := range cfg.Methods {
			for _, nfe := range cfg.NFEs {
				p := tp
				p.Method, p.NFE = method, nfe
				row := map[string]*StudyCell{}
				var reasons []string
				for _, m := range models {
					p.Ckpt = m.Dir
					cell, err := studyRun(p, m, cfg.Classifier, cfg.KIDRef, cfg.Log)
					if err != nil {
						return err
					}
					cell.Task, cell.SigmaY, cell.Method, cell.NFE, cell.Model = task.Name, task.SigmaY, method, nfe, m.Name
					if cell.skipped != "" {
						reasons = append(reasons, fmt.Sprintf("%s: %s", m.Name, cell.skipped))
						continue
					}
					fmt.Fprintf(cfg.Log, "experiment restore: %s σ_y %g, %s, NFE %d, %s: PSNR %.2f ± %.2f, SSIM %.3f (%.0fs)\n",
						task.Name, task.SigmaY, method, nfe, m.Name, cell.PSNR.Mean, cell.PSNR.SE, cell.SSIM.Mean, cell.Wall)
					s.Cells = append(s.Cells, cell)
					row[m.Name] = cell
				}
				if len(reasons) > 0 {
					what := fmt.Sprintf("%s σ_y %g, %s, NFE %d", task.Name, task.SigmaY, method, nfe)
					if _, why, _ := strings.Cut(reasons[0], ": "); len(reasons) == len(models) && allSuffix(reasons, why) {
						s.Skipped = append(s.Skipped, what+", every model: "+why)
					} else {
						s.Skipped = append(s.Skipped, what+", "+strings.Join(reasons, "; "))
					}
				}
				for _, pr := range cfg.Pairs {
					a, b := row[pr[0]], row[pr[1]]
					if a == nil || b == nil {
						continue
					}
					s.Pairs = append(s.Pairs, pairedDifference(a, b))
				}
			}
		}
	}
	if len(s.Cells) == 0 {
		return inputErr("experiment restore: no cell could run: %s", strings.Join(s.Skipped, "; "))
	}
	return nil
}

// StudyPairs reads --pair A:B (default: the first model against each other one).
func StudyPairs(args []string, models []StudyModel) ([][2]string, error) {
	known := map[string]bool{}
	for _, m := range models {
		known[m.Name] = true
	}
	var pairs [][2]string
	for _, arg := range args {
		a, b, ok := strings.Cut(arg, ":")
		if !ok || !known[a] || !known[b] || a == b {
			return nil, inputErr("experiment restore: --pair %q, want A:B with two different --model names", arg)
		}
		pairs = append(pairs, [2]string{a, b})
	}
	if len(pairs) == 0 {
		for _, m := range models[1:] {
			pairs = append(pairs, [2]string{models[0].Name, m.Name})
		}
	}
	return pairs, nil
}

// The tasks and methods a study takes (inpaint-mask needs a drawn mask: holdctl serve).
var (
	studyTasks   = []string{TaskInpaintBox, TaskInpaintRandom, TaskSR2, TaskSR4, TaskDeblur, TaskDenoise}
	studyMethods = []string{MethodReplace, MethodRepaint, MethodDDNM, MethodPiGDM, MethodDPS, MethodNone}
)

// StudyTasks reads --tasks NAME[:σ_y] (σ_y defaults to noise) and checks --methods.
func StudyTasks(tasks, methods []string, noise float64) ([]StudyTask, error) {
	for _, m := range methods {
		if !slices.Contains(studyMethods, m) {
			return nil, inputErr("experiment restore: --methods %q, want some of %s", m, strings.Join(studyMethods, ", "))
		}
	}
	var out []StudyTask
	for _, arg := range tasks {
		name, sy, has := strings.Cut(arg, ":")
		if !slices.Contains(studyTasks, name) {
			return nil, inputErr("experiment restore: --tasks %q: unknown task %q, want one of %s (optionally :σ_y)", arg, name, strings.Join(studyTasks, ", "))
		}
		t := StudyTask{Name: name, SigmaY: noise}
		if has {
			v, err := strconv.ParseFloat(sy, 64)
			if err != nil || !(v >= 0 && v <= 100) {
				return nil, inputErr("experiment restore: --tasks %q: σ_y %q, want a number in [0, 100]", arg, sy)
			}
			t.SigmaY = v
		}
		out = append(out, t)
	}
	return out, nil
}

// allSuffix reports whether every reason ends in why (the same reason for every model).
func allSuffix(reasons []string, why string) bool {
	for _, r := range reasons {
		if !strings.HasSuffix(r, ": "+why) {
			return false
		}
	}
	return true
}

// studyRun restores the images of p with model m and measures them; a cell the task, method
// or model cannot take comes back with skipped set.
func studyRun(p Params, m StudyModel, clf *layers.Classifier, kidRef []float32, warn io.Writer) (*StudyCell, error) {
	if p.Method == MethodNone {
		p.Method = ""
		if p.Task.Name != TaskDenoise {
			return &StudyCell{skipped: "none is denoise's exact start"}, nil
		}
	}
	run, err := Prepare(p, m.Model)
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		return &StudyCell{skipped: ie.Error()}, nil
	case err != nil:
		return nil, err
	}
	if err := run.LoadImages(); err != nil {
		return nil, err
	}
	start := time.Now()
	out, st, err := run.Restore()
	if err != nil {
		return nil, err
	}
	rep, err := run.Measure(warn, out, st, clf)
	if err != nil {
		return nil, err
	}
	cell := &StudyCell{PSNR: statOf(rep.PerImage.PSNR), SSIM: statOf(rep.PerImage.SSIM), RMS: rep.RMSResidual,
		VJP: rep.VJP, Wall: time.Since(start).Seconds(), Diverged: rep.NonFinite, per: rep.PerImage}
	if clf != nil {
		fd, ag := statOf(rep.PerImage.FDist), statOf(rep.PerImage.Agree)
		cell.FDist, cell.Agree = &fd, &ag
		k, err := studyKID(clf, out, run, kidRef)
		if err != nil {
			return nil, err
		}
		cell.KID = k
	}
	if run.K > 1 {
		gain := make([]float64, len(rep.PerImage.PSNR))
		for i := range gain {
			gain[i] = rep.PerImage.PSNRMeanOfK[i] - rep.PerImage.PSNR[i]
		}
		g := statOf(gain)
		cell.Calib = &g
	}
	return cell, nil
}

// restoreKID is KID between the restorations (clipped by report) and the reference features.
func studyKID(clf *layers.Classifier, out []float64, run *Job, ref []float32) (*Stat, error) {
	x := make([]float32, 0, len(out))
	d := run.Task.Dim()
	rows := 0
	for r := 0; r*d < len(out); r++ {
		if Diverged(out[r*d : (r+1)*d]) {
			continue
		}
		for _, v := range out[r*d : (r+1)*d] {
			x = append(x, float32(v))
		}
		rows++
	}
	if rows < 2 {
		return nil, nil
	}
	src, err := fid.RowsSource(x, run.Task.C, run.Task.H, run.Task.W)
	if err != nil {
		return nil, err
	}
	ext := fid.NewClassifierFeatures(clf)
	feats, err := fid.Extract(ext, src, Batch, nil)
	if err != nil {
		return nil, err
	}
	k, se, err := fid.KID(feats, ref, ext.Dim(), fid.DefaultKID)
	if err != nil {
		return nil, err
	}
	return &Stat{Mean: k, SE: se, N: rows}, nil
}

// KIDReference extracts the classifier features of every image of the data set spec (saying so on log).
func KIDReference(clf *layers.Classifier, spec string, shape *imagedata.Dataset, log io.Writer) ([]float32, error) {
	ds, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, inputErr("--kid-ref: %v", err)
	}
	if ds.C != shape.C || ds.H != shape.H || ds.W != shape.W {
		return nil, inputErr("--kid-ref %s holds %d×%d×%d images, the models' are %d×%d×%d", spec, ds.C, ds.H, ds.W, shape.C, shape.H, shape.W)
	}
	fmt.Fprintf(log, "experiment restore: KID reference: features of the %d images of %s\n", ds.Len(), spec)
	return fid.Extract(fid.NewClassifierFeatures(clf), fid.DatasetSource(ds), 256, nil)
}

// PriorMoments reads --prior (its first --prior-n images) and returns their mean and
// covariance (+1e-6·I, as scripts/restore_baselines.py), saying so on log.
func PriorMoments(priorN int, spec string, shape *imagedata.Dataset, log io.Writer) ([]float64, []float64, error) {
	ds, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, nil, inputErr("--prior: %v", err)
	}
	if ds.C != shape.C || ds.H != shape.H || ds.W != shape.W {
		return nil, nil, inputErr("--prior %s holds %d×%d×%d images, the models' are %d×%d×%d", spec, ds.C, ds.H, ds.W, shape.C, shape.H, shape.W)
	}
	n := ds.Len()
	if k := priorN; k > 0 {
		n = min(n, k)
	}
	d := ds.C * ds.H * ds.W
	if err := budget.CheckCount(int64(n)*int64(d)+2*int64(d)*int64(d), 8, "--prior-n"); err != nil {
		return nil, nil, &InputError{err}
	}
	x := make([]float32, n*d)
	for i := range n {
		ds.Scale(x[i*d:(i+1)*d], ds.Pixels(i), false, nil)
	}
	fmt.Fprintf(log, "experiment restore: baselines: the moments of %d images of %s\n", n, spec)
	mean, cov, err := Moments(x, n, d, 1e-6)
	if err != nil {
		return nil, nil, inputErr("--prior: %v", err)
	}
	return mean, cov, nil
}

// studyBaselines measures mean fill, LMMSE and one Gaussian-posterior sample on the images and
// measurements of p (nil when the task does not apply). The operator is factored once, or per image
// when the mask is drawn per image.
func studyBaselines(p Params, m *train.Model, mean, cov []float64) ([]*StudyCell, error) {
	p.Method, p.NFE = MethodDDNM, 2
	if p.Task.Name == TaskDenoise {
		p.Method = ""
	}
	run, err := Prepare(p, m)
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if err := run.LoadImages(); err != nil {
		return nil, err
	}
	start := time.Now()
	perImage := p.Task.Name == TaskInpaintRandom || (p.Task.Name == TaskInpaintBox && p.Task.BoxPos == BoxRandom)
	n, d := len(run.Images), run.Task.Dim()
	names := []string{"mean fill", "LMMSE", "Gaussian sample"}
	psnr, ssim := [3][]float64{}, [3][]float64{}
	var post *LinearPosterior
	x := make([]float64, d)
	z := make([]float64, d)
	for i := range n {
		pr := run.Problems[i]
		if post == nil || perImage {
			if post, err = NewLinearPosterior(mean, cov, pr.Op, pr.SigmaY, BaselineJitter); err != nil {
				return nil, err
			}
		}
		st := rng.New(sample.ChunkSeed(p.Seed, run.Images[i]) ^ 0x6261736531) // "base1": the baseline's own stream
		for j := range z {
			z[j] = st.Normal()
		}
		for b := range 3 {
			switch b {
			case 0:
				MeanFill(x, pr.Op, pr.Y, mean)
			case 1:
				post.PosteriorMean(x, pr.Y)
			case 2:
				if err := post.Sample(x, pr.Y, z); err != nil {
					return nil, err
				}
			}
			for j, v := range x {
				x[j] = math.Max(-1, math.Min(1, v))
			}
			s, err := SSIM(x, run.Truth[i], run.Task.C, run.Task.H, run.Task.W)
			if err != nil {
				return nil, err
			}
			psnr[b] = append(psnr[b], CapPSNR(PSNR(x, run.Truth[i])))
			ssim[b] = append(ssim[b], s)
		}
	}
	wall := time.Since(start).Seconds() / 3
	cells := make([]*StudyCell, 3)
	for b, name := range names {
		cells[b] = &StudyCell{Task: p.Task.Name, SigmaY: p.Task.Noise, Method: name, Model: "baseline", PSNR: statOf(psnr[b]),
			SSIM: statOf(ssim[b]), Wall: wall, baseline: true, per: PerImage{PSNR: psnr[b], SSIM: ssim[b]}}
	}
	return cells, nil
}

// pairedDifference is A − B per image, mean ± s.e. over the images both measured.
func pairedDifference(a, b *StudyCell) PairCell {
	diff := func(x, y []float64) []float64 {
		if x == nil || y == nil {
			return nil
		}
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] - y[i] // NaN where either diverged
		}
		return out
	}
	pc := PairCell{Task: a.Task, SigmaY: a.SigmaY, Method: a.Method, NFE: a.NFE, A: a.Model, B: b.Model,
		PSNR: statOf(diff(a.per.PSNR, b.per.PSNR)), SSIM: statOf(diff(a.per.SSIM, b.per.SSIM))}
	if a.FDist != nil && b.FDist != nil {
		fd, ag := statOf(diff(a.per.FDist, b.per.FDist)), statOf(diff(a.per.Agree, b.per.Agree))
		pc.FDist, pc.Agree = &fd, &ag
	}
	return pc
}

// Markdown writes the study's tables.
func (s *Study) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Images %d … %d of `%s`, %d restoration(s) each, seed %d; holdctl %s.\n\n", s.First, s.First+s.N-1, s.In, s.K, s.Seed, s.Version)
	for _, m := range s.Models {
		fmt.Fprintf(&b, "- `%s`: `%s` (%s)\n", m.Name, m.Dir, m.SDE)
	}
	if s.Prior != "" {
		fmt.Fprintf(&b, "- baselines: the mean and covariance of `%s`\n", s.Prior)
	}
	if s.KIDRef != "" {
		fmt.Fprintf(&b, "- KID against the classifier features of all of `%s`\n", s.KIDRef)
	}
	calib := s.K > 1
	b.WriteString("\nPSNR (dB) and SSIM on [0, 1], mean ± s.e. over images")
	if calib {
		fmt.Fprintf(&b, "; calibration: PSNR of the mean of %d samples − PSNR of one (a calibrated sampler: %.2f dB)", s.K, 10*math.Log10(2*float64(s.K)/float64(s.K+1)))
	}
	b.WriteString(".\n\n| task | σ_y | method | NFE | model | PSNR | SSIM | feature dist. | class agr. | KID | RMS(Ax − y) |")
	if calib {
		b.WriteString(" calibration |")
	}
	b.WriteString(" VJPs | s |\n|---|---|---|---|---|---|---|---|---|---|---|")
	if calib {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for _, c := range s.Cells {
		nfe := "—"
		if !c.baseline {
			nfe = strconv.Itoa(c.NFE)
		}
		fmt.Fprintf(&b, "| %s | %g | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Task, c.SigmaY, c.Method, nfe, c.Model,
			pm(c.PSNR, 2), pm(c.SSIM, 3), pmp(c.FDist, 4), pmp(c.Agree, 3), pmp(c.KID, 1), rmsText(c))
		if calib {
			fmt.Fprintf(&b, " %s |", pmp(c.Calib, 2))
		}
		fmt.Fprintf(&b, " %d | %.0f |\n", c.VJP, c.Wall)
	}
	if len(s.Pairs) > 0 {
		b.WriteString("\nPaired differences A − B (the same images, masks, measurements and seeds), mean ± s.e. over images:\n\n")
		b.WriteString("| task | σ_y | method | NFE | A − B | ΔPSNR | ΔSSIM | Δfeature dist. | Δclass agr. |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, p := range s.Pairs {
			fmt.Fprintf(&b, "| %s | %g | %s | %d | %s − %s | %s | %s | %s | %s |\n", p.Task, p.SigmaY, p.Method, p.NFE, p.A, p.B,
				pm(p.PSNR, 2), pm(p.SSIM, 3), pmp(p.FDist, 4), pmp(p.Agree, 3))
		}
	}
	if len(s.Skipped) > 0 {
		b.WriteString("\nSkipped:\n\n")
		for _, k := range s.Skipped {
			fmt.Fprintf(&b, "- %s\n", k)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pm(s Stat, digits int) string {
	if math.IsNaN(s.Mean) {
		return "—"
	}
	return fmt.Sprintf("%.*f ± %.*f", digits, s.Mean, digits, s.SE)
}

func pmp(s *Stat, digits int) string {
	if s == nil {
		return "—"
	}
	return pm(*s, digits)
}

func rmsText(c *StudyCell) string {
	if c.baseline {
		return "—"
	}
	return fmt.Sprintf("%.2g", c.RMS)
}
