package restore

// A restoration job with a trained image model: the settings of holdctl restore (or of one cell of
// experiment restore, or of one request of holdctl serve) checked against the model, the images and
// their measurements, the restorations, their measures (PSNR, SSIM, the residual of the measurement,
// the classifier's feature distance and class agreement) and the files written.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"holdgo/autograd"
	"holdgo/data"
	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/layers"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// InputError is an error of a job's settings or inputs (the command's exit status 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr is an InputError of the message.
func inputErr(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// The solvers of restore's Restorer as --sampler names: the aligned gauge's steps (sample's a-anc,
// a-ddim, a-sde2) and DDNM+'s own step.
const (
	SamplerDDNM = "a-ddnm"
	SamplerAnc  = "a-anc"
	SamplerDDIM = "a-ddim"
	SamplerSDE2 = "a-sde2"
)

var samplerSteps = map[string]string{SamplerAnc: StepAnc, SamplerDDIM: StepDDIM, SamplerSDE2: StepSDE2}

// Batch is the number of samples restored together (images × --samples-per-image): the states
// of one batch are all that is held at once. Every image's randomness is keyed by its index, so the
// batch does not change a result.
const Batch = 64

// ForwardBatch is the samples of one forward pass of the network (without --forward-mib): every
// pass holds exactly this many (train.NetworkScorer.PadBatch), so a small one wastes little on the
// last, padded pass of a run and on holdctl serve's single images.
const ForwardBatch = 8

// PSNRCap stands in for the PSNR of a restoration identical to the truth (+Inf, which JSON
// cannot hold).
const PSNRCap = 100.0

// Params are the settings of one restoration job: holdctl restore's flags, one cell of experiment
// restore or one request of holdctl serve.
type Params struct {
	Ckpt       string
	RawWeights bool
	Task       Task   // the shape is the model's
	Method     string // "" picks the task's default
	Eta        float64
	Resample   int
	Jump       int
	DPSScale   float64
	PiGDMVar   float64
	Clip       float64
	Sampler    string // "" picks the method's default
	Grid       string
	NFE        int
	SigmaMin   float64
	In         string
	First      int
	N          int
	K          int
	Seed       uint64
	Outs       []string
}

// Job is one restoration job, checked (Prepare): the model, the task, the method and its σ-grid, and
// once loaded (LoadImages, SetImages) the images and their measurements.
type Job struct {
	P        Params
	Model    *train.Model
	Shape    *imagedata.Dataset // the model's image shape
	Task     Task
	Method   Method
	Sampler  string
	Grid     []float64
	Start    bool // the exact denoising start at σ = σ_y
	K        int
	Seed     uint64
	Images   []int       // indices in --in
	Truth    [][]float64 // [−1, 1]
	Labels   []int       // nil when --in has none
	Problems []Problem
}

// Report is the JSON (and the summary line) of a run.
type Report struct {
	Ckpt           string     `json:"ckpt"`
	SDE            string     `json:"sde"`
	In             string     `json:"in"`
	First          int        `json:"first"`
	N              int        `json:"n"`
	K              int        `json:"samples_per_image"`
	Seed           uint64     `json:"seed"`
	Task           TaskJSON   `json:"task"`
	Method         MethodJSON `json:"method"`
	PSNR           float64    `json:"psnr"`
	PSNRSE         float64    `json:"psnr_se"`
	SSIM           float64    `json:"ssim"`
	SSIMSE         float64    `json:"ssim_se"`
	PSNRMeanOfK    *float64   `json:"psnr_mean_of_k,omitempty"`
	PSNRMeanOfKSE  *float64   `json:"psnr_mean_of_k_se,omitempty"`
	PSNRDegraded   float64    `json:"psnr_degraded"`
	RMSResidual    float64    `json:"rms_residual"`
	RMSResidualMax float64    `json:"rms_residual_max"`
	// RMSResidualPreclip is the largest RMS(A x − y) of the read-outs before they are clipped to
	// [−1, 1] (the methods' own constraint; clipping moves pooled and blurred measurements).
	RMSResidualPreclip float64  `json:"rms_residual_preclip_max"`
	SigmaY             float64  `json:"sigma_y"`
	FDist              *float64 `json:"fdist,omitempty"`
	FDistSE            *float64 `json:"fdist_se,omitempty"`
	ClassAgreement     *float64 `json:"class_agreement,omitempty"`
	ClassAgreeSE       *float64 `json:"class_agreement_se,omitempty"`
	ClassReference     string   `json:"class_reference,omitempty"`
	NFE                int      `json:"nfe"`
	VJP                int      `json:"vjp"`
	WallSeconds        float64  `json:"wall_s"`
	MaxAbsPreclip      float64  `json:"max_abs_preclip"`
	NonFinite          int      `json:"nonfinite"`
	Outputs            []string `json:"outputs"`
	HoldctlVersion     string   `json:"version"`

	// PerImage holds each image's measures (NaN where every sample of the image diverged), in --in's
	// order, for experiment restore's paired differences.
	PerImage PerImage `json:"-"`
}

// PerImage are the per-image measures of a run, each averaged over the image's K samples.
type PerImage struct {
	PSNR, SSIM, PSNRMeanOfK, FDist, Agree []float64
}

// TaskJSON is a Report's task.
type TaskJSON struct {
	Name      string   `json:"name"`
	Box       *int     `json:"box,omitempty"`
	BoxPos    string   `json:"box_pos,omitempty"`
	Drop      *float64 `json:"drop,omitempty"`
	BlurSigma *float64 `json:"blur_sigma,omitempty"`
	Noise     float64  `json:"noise"`
	Measured  int      `json:"measurements"`
}

// MethodJSON is a Report's method and its settings.
type MethodJSON struct {
	Name       string   `json:"name"`
	Sampler    string   `json:"sampler"`
	Grid       string   `json:"grid"`
	Steps      int      `json:"steps"`
	SigmaStart float64  `json:"sigma_start"`
	SigmaMin   float64  `json:"sigma_min"`
	Clip       float64  `json:"clip"`
	Eta        *float64 `json:"eta,omitempty"`
	Resample   *int     `json:"resample,omitempty"`
	Jump       *int     `json:"jump,omitempty"`
	DPSScale   *float64 `json:"dps_scale,omitempty"`
	PiGDMVar   *float64 `json:"pigdm_var,omitempty"`
	ExactStart bool     `json:"exact_start,omitempty"`
}

// SSIMMinSide is the smallest image side SSIM measures (its 11×11 Gaussian window).
const SSIMMinSide = 11

// Prepare checks the task, the method and its sampler of p against the model m and builds the
// σ-grid.
func Prepare(p Params, m *train.Model) (*Job, error) {
	shape, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return nil, inputErr("--ckpt %s is a model of %s, not of images: restore needs an image model", p.Ckpt, m.Config.Data)
	}
	if ns, ok := m.Score.(*train.NetworkScorer); ok {
		// Passes of one size whatever the images and K: an image restores to the same bits in any run.
		ns.PadBatch = true
		if ns.ForwardBatch == 0 && ns.MemoryBudget == 0 {
			ns.ForwardBatch = ForwardBatch
		}
	}
	run := &Job{P: p, Model: m, Shape: shape, K: p.K, Seed: p.Seed}
	run.Task = p.Task
	run.Task.C, run.Task.H, run.Task.W = shape.C, shape.H, shape.W
	if err := run.Task.Check(); err != nil {
		return nil, inputErr("%v", err)
	}
	name := p.Method
	switch {
	case name == "" && run.Task.Name == TaskDenoise:
		name = MethodNone
	case name == "":
		name = MethodDDNM
	case name == MethodNone && run.Task.Name != TaskDenoise:
		return nil, inputErr("--method none restores nothing for %s (it is denoise's exact start): use replace, repaint, ddnm, pigdm or dps", run.Task.Name)
	case name == MethodExact:
		return nil, inputErr("--method exact needs the posterior's own denoiser, which only an oracle prior has (package restore's tests)")
	}
	run.Start = name == MethodNone
	run.Method = Method{Name: name, Eta: p.Eta, Resample: p.Resample, Jump: p.Jump,
		DPSScale: p.DPSScale, PiGDMVar: p.PiGDMVar, Clip: p.Clip}
	run.Sampler = p.Sampler
	switch {
	case run.Sampler == "" && name == MethodDDNM:
		run.Sampler = SamplerDDNM
	case run.Sampler == "" && (name == MethodReplace || name == MethodRepaint):
		run.Sampler = SamplerAnc
	case run.Sampler == "":
		run.Sampler = SamplerSDE2
	}
	if name == MethodDDNM && run.Sampler != SamplerDDNM {
		return nil, inputErr("--method ddnm takes its own step: --sampler %s (or none), not %s", SamplerDDNM, run.Sampler)
	}
	if name != MethodDDNM {
		step, ok := samplerSteps[run.Sampler]
		if !ok {
			return nil, inputErr("--sampler %s: --method %s steps with %s, %s or %s (%s is ddnm's own)", run.Sampler, name,
				SamplerAnc, SamplerDDIM, SamplerSDE2, SamplerDDNM)
		}
		run.Method.Step = step
	}
	if err := run.Method.Check(); err != nil {
		return nil, inputErr("%v", err)
	}
	if name == MethodPiGDM || name == MethodDPS {
		if _, ok := m.Score.(sample.DivScorer); !ok {
			return nil, inputErr("--method %s needs vector–Jacobian products of the score, which this model's score does not give", name)
		}
	}
	op, err := run.Task.Operator(run.Seed, 0)
	if err != nil {
		return nil, inputErr("%v", err)
	}
	if err := run.Method.CheckOperator(op); err != nil {
		return nil, inputErr("--method %s with --task %s: %v", name, run.Task.Name, err)
	}
	return run, run.makeGrid()
}

// makeGrid builds the σ-grid: from the horizon, or for the exact denoising start from the time where
// the noise level is σ_y; --nfe − 1 steps (the read-out is one forward pass), divided by --resample
// for repaint.
func (r *Job) makeGrid() error {
	kind, nfe := r.P.Grid, r.P.NFE
	if !sample.IsSigmaGrid(kind) {
		return inputErr("--grid %s: restore steps in the noise level σ, give a σ-grid (edm, vpmatched, lambda or vplambda)", kind)
	}
	steps := nfe - 1
	if r.Method.Name == MethodRepaint {
		steps /= r.Method.Resample
	}
	if steps < 1 {
		return inputErr("--nfe %d leaves no step for %s (one pass is the read-out; repaint takes --resample %d per step)", nfe, r.Method.Name, r.Method.Resample)
	}
	sde := r.Model.SDE
	start := sde.Horizon()
	if r.Start {
		t, err := sample.TimeAtNoiseLevel(sde, r.Task.Noise, sde.MinTime(), sde.Horizon())
		if err != nil {
			return inputErr("--noise %g: no time of the SDE has that noise level for denoise's exact start: %v", r.Task.Noise, err)
		}
		start = t
	}
	grid, err := sample.NewSigmaGrid(sde, kind, start, r.P.SigmaMin, steps)
	if err != nil {
		return inputErr("--grid %s: %v", kind, err)
	}
	r.Grid = grid
	return nil
}

// LoadImages reads images first … first+n−1 of --in, in [−1, 1], checks their shape against the
// model's, and measures each.
func (r *Job) LoadImages() error {
	in, first, n := r.P.In, r.P.First, r.P.N
	d := r.Task.Dim()
	var (
		all   []float32
		count int
	)
	switch {
	case imagedata.IsSpec(in):
		ds, err := imagedata.Open(in, imagedata.Options{})
		if err != nil {
			return inputErr("--in: %v", err)
		}
		if ds.C != r.Shape.C || ds.H != r.Shape.H || ds.W != r.Shape.W {
			return inputErr("--in %s holds %d×%d×%d images (C×H×W), the model's are %d×%d×%d", in, ds.C, ds.H, ds.W, r.Shape.C, r.Shape.H, r.Shape.W)
		}
		count = ds.Len()
		if first+n > count {
			return inputErr("--first %d --n %d: %s holds %d images", first, n, in, count)
		}
		all = make([]float32, n*d)
		for i := range n {
			ds.Scale(all[i*d:(i+1)*d], ds.Pixels(first+i), false, nil)
		}
		if ds.Labels != nil {
			r.Labels = ds.Labels[first : first+n]
		}
	case strings.HasSuffix(in, ".npy"):
		a, err := data.ReadNPY(in)
		if err != nil {
			return inputErr("--in: %v", err)
		}
		if len(a.Shape) != 2 || a.Cols() != d {
			return inputErr("--in %s has shape %v: want (n, %d), images of %d×%d×%d values in [−1, 1]", in, a.Shape, d, r.Shape.C, r.Shape.H, r.Shape.W)
		}
		count = a.Rows()
		if first+n > count {
			return inputErr("--first %d --n %d: %s holds %d images", first, n, in, count)
		}
		for i, v := range a.Data[first*d : (first+n)*d] {
			if !(math.Abs(v) <= 1+1e-6) {
				return inputErr("--in %s: value %v of image %d is outside [−1, 1] (images scaled as in training: 2k/255 − 1)", in, v, first+i/d)
			}
		}
		all = a.Float32()[first*d : (first+n)*d]
	default:
		return inputErr("--in %s: want a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) or a .npy file", in)
	}
	return r.SetImages(all, first)
}

// SetImages takes the images of all (len(all)/d of them, values in [−1, 1], clipped to it) as images
// first, first+1, … (the index keys each image's randomness) and measures each: loadImages's images,
// or images given in memory (holdctl serve).
func (r *Job) SetImages(all []float32, first int) error {
	d := r.Task.Dim()
	n := len(all) / d
	r.Images = make([]int, n)
	r.Truth = make([][]float64, n)
	r.Problems = make([]Problem, n)
	for i := range n {
		img := first + i
		q := make([]float64, d)
		for j, v := range all[i*d : (i+1)*d] {
			q[j] = math.Max(-1, math.Min(1, float64(v)))
		}
		op, err := r.Task.Operator(r.Seed, img)
		if err != nil {
			return inputErr("%v", err)
		}
		r.Images[i], r.Truth[i] = img, q
		r.Problems[i] = Problem{Op: op, Y: Measure(op, q, r.Task.Noise, r.Seed, img), SigmaY: r.Task.Noise}
	}
	return nil
}

// Restore runs the method on every image, Batch samples at a time, and returns the read-outs
// (n·K rows of d values, image-major, not clipped) and the work per sample.
func (r *Job) Restore() ([]float64, Stats, error) {
	d, k := r.Task.Dim(), r.K
	sde := r.Model.SDE
	out := make([]float64, len(r.Images)*k*d)
	var stats Stats
	per := max(1, Batch/k)
	for lo := 0; lo < len(r.Images); lo += per {
		hi := min(len(r.Images), lo+per)
		images := r.Images[lo:hi]
		var (
			u   []float64
			err error
		)
		if r.Start {
			ys := make([][]float64, hi-lo)
			for i := range ys {
				ys[i] = r.Problems[lo+i].Y
			}
			if u, err = DenoiseStates(sde, r.Grid[0], ys, d, k, r.Seed, images); err != nil {
				return nil, stats, err
			}
		} else {
			u = PriorStates(sde, d, k, r.Seed, images)
		}
		rs := &Restorer{SDE: sde, Score: r.Model.Score, Method: r.Method, Grid: r.Grid, Dim: d}
		x, st, err := rs.Run(u, r.Problems[lo:hi], k, PhiloxNoise{Seed: r.Seed, Images: images})
		if err != nil {
			return nil, stats, err
		}
		copy(out[lo*k*d:], x)
		stats = st
	}
	return out, stats, nil
}

// Degraded returns what the grid shows of image i's measurement: A⁺y (missing pixels 0, mid-gray;
// pooled values replicated), or y itself for the blur, whose A⁺ amplifies the noise.
func (r *Job) Degraded(i int) []float64 {
	p := r.Problems[i]
	x := make([]float64, r.Task.Dim())
	if r.Task.Name == TaskDeblur {
		copy(x, p.Y)
		return x
	}
	Pinv(p.Op, x, p.Y)
	return x
}

// Measure clips the read-outs to [−1, 1] in place (as float32 values, as written) and measures them.
func (r *Job) Measure(warn io.Writer, out []float64, st Stats, clf *layers.Classifier) (*Report, error) {
	d, k, n := r.Task.Dim(), r.K, len(r.Images)
	rep := &Report{Ckpt: r.P.Ckpt, SDE: r.Model.Config.SDE, In: r.P.In, First: r.P.First, N: n, K: k,
		Seed: r.Seed, SigmaY: r.Task.Noise, NFE: st.NFE, VJP: st.VJP, Outputs: r.P.Outs}
	rep.Task = TaskJSON{Name: r.Task.Name, Noise: r.Task.Noise, Measured: r.Problems[0].Op.Rows()}
	switch r.Task.Name {
	case TaskInpaintBox:
		rep.Task.Box, rep.Task.BoxPos = &r.Task.Box, r.Task.BoxPos
	case TaskInpaintRandom:
		rep.Task.Drop = &r.Task.Drop
	case TaskDeblur:
		rep.Task.BlurSigma = &r.Task.BlurSigma
	}
	smax, _ := sample.NoiseLevel(r.Model.SDE, r.Grid[0])
	rep.Method = MethodJSON{Name: r.Method.Name, Sampler: r.Sampler, Grid: r.P.Grid, Steps: len(r.Grid) - 1,
		SigmaStart: smax, SigmaMin: r.P.SigmaMin, Clip: r.Method.Clip, ExactStart: r.Start}
	switch r.Method.Name {
	case MethodDDNM:
		rep.Method.Eta = &r.Method.Eta
	case MethodRepaint:
		rep.Method.Resample, rep.Method.Jump = &r.Method.Resample, &r.Method.Jump
	case MethodDPS:
		rep.Method.DPSScale = &r.Method.DPSScale
	case MethodPiGDM:
		rep.Method.PiGDMVar = &r.Method.PiGDMVar
	}
	raw := append([]float64(nil), out...)
	psnr, ssim, psnrMean, degraded := make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n), make([]float64, n)
	var rmsSum float64
	var rmsCount int
	rep.PerImage = PerImage{PSNR: nanSlice(n), SSIM: nanSlice(n), PSNRMeanOfK: nanSlice(n), FDist: nanSlice(n), Agree: nanSlice(n)}
	for i := range n {
		truth, p := r.Truth[i], r.Problems[i]
		deg := r.Degraded(i)
		for j, v := range deg {
			deg[j] = math.Max(-1, math.Min(1, v))
		}
		degraded[i] = CapPSNR(PSNR(deg, truth))
		mean := make([]float64, d)
		res := make([]float64, p.Op.Rows())
		var ps, ss float64
		finite := 0
		for s := range k {
			x := out[(i*k+s)*d : (i*k+s+1)*d]
			ok := true
			for j, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					ok = false
					continue
				}
				rep.MaxAbsPreclip = math.Max(rep.MaxAbsPreclip, math.Abs(v))
				x[j] = float64(float32(math.Max(-1, math.Min(1, v))))
			}
			if !ok {
				rep.NonFinite++
				continue
			}
			finite++
			rep.RMSResidualPreclip = math.Max(rep.RMSResidualPreclip, residualRMS(p, raw[(i*k+s)*d:(i*k+s+1)*d], res))
			v, err := SSIM(x, truth, r.Task.C, r.Task.H, r.Task.W)
			if err != nil {
				return nil, err
			}
			ps += CapPSNR(PSNR(x, truth))
			ss += v
			e := residualRMS(p, x, res)
			rmsSum += e
			rmsCount++
			rep.RMSResidualMax = math.Max(rep.RMSResidualMax, e)
			for j, v := range x {
				mean[j] += v
			}
		}
		if finite == 0 {
			continue
		}
		psnr = append(psnr, ps/float64(finite))
		ssim = append(ssim, ss/float64(finite))
		for j := range mean {
			mean[j] /= float64(finite)
		}
		psnrMean = append(psnrMean, CapPSNR(PSNR(mean, truth)))
		rep.PerImage.PSNR[i], rep.PerImage.SSIM[i] = ps/float64(finite), ss/float64(finite)
		rep.PerImage.PSNRMeanOfK[i] = psnrMean[len(psnrMean)-1]
	}
	if len(psnr) == 0 {
		return nil, errors.New("every restoration diverged (NaN or Inf): try --clip 1, more NFE or another method")
	}
	ps, ss := sample.MeanSE(psnr), sample.MeanSE(ssim)
	rep.PSNR, rep.PSNRSE, rep.SSIM, rep.SSIMSE = ps.Mean, ps.SE, ss.Mean, ss.SE
	rep.PSNRDegraded = sample.MeanSE(degraded).Mean
	rep.RMSResidual = rmsSum / float64(rmsCount)
	if k > 1 {
		pm := sample.MeanSE(psnrMean)
		rep.PSNRMeanOfK, rep.PSNRMeanOfKSE = &pm.Mean, &pm.SE
	}
	if rep.NonFinite > 0 {
		fmt.Fprintf(warn, "warning: %d of %d restorations diverged (NaN or Inf); they are left out of the measures and kept in the .npy\n", rep.NonFinite, n*k)
	}
	if clf != nil {
		if err := r.classify(rep, clf, out); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// residualRMS is RMS(A x − y) of problem p (res: scratch of p.Op.Rows() values).
func residualRMS(p Problem, x, res []float64) float64 {
	p.Op.Apply(res, x)
	var e float64
	for j, y := range p.Y {
		e += (res[j] - y) * (res[j] - y)
	}
	return math.Sqrt(e / float64(len(res)))
}

// CapPSNR caps a PSNR at PSNRCap (an identical restoration's is +Inf).
func CapPSNR(v float64) float64 { return math.Min(v, PSNRCap) }

// LoadClassifier loads --features and checks it takes the model's images.
func LoadClassifier(path string, shape *imagedata.Dataset) (*layers.Classifier, error) {
	clf, _, err := fid.LoadClassifier(path)
	if err != nil {
		return nil, inputErr("--features: %v", err)
	}
	if err := fid.NewClassifierFeatures(clf).Check(shape.C, shape.H, shape.W); err != nil {
		return nil, inputErr("--features %s: %v", path, err)
	}
	return clf, nil
}

// classifierOutputs returns the penultimate features (unit-normalised) and the predicted class of
// each of the n images of x.
func classifierOutputs(clf *layers.Classifier, x []float32, n, c, h, w int) ([][]float64, []int) {
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	d := c * h * w
	feats, classes := make([][]float64, n), make([]int, n)
	for lo := 0; lo < n; lo += Batch {
		hi := min(n, lo+Batch)
		g.Reset()
		f, logits := clf.Forward(g, g.Const(tensor.FromSlice(append([]float32(nil), x[lo*d:hi*d]...), hi-lo, c, h, w)))
		fd, ld := f.T.Data(), logits.T.Data()
		nf, nc := len(fd)/(hi-lo), len(ld)/(hi-lo)
		for i := range hi - lo {
			v := make([]float64, nf)
			var norm float64
			for j := range v {
				v[j] = float64(fd[i*nf+j])
				norm += v[j] * v[j]
			}
			if norm = math.Sqrt(norm); norm > 0 {
				for j := range v {
					v[j] /= norm
				}
			}
			feats[lo+i] = v
			best := 0
			for j := range nc {
				if ld[i*nc+j] > ld[i*nc+best] {
					best = j
				}
			}
			classes[lo+i] = best
		}
	}
	return feats, classes
}

// classify adds the feature distance ‖φ̂/|φ̂| − φ/|φ|‖² of the classifier's penultimate features between
// each restoration and its truth, and the agreement of the restoration's class with the truth's label
// (or, where --in has no labels, with the class the classifier gives the truth), per image averaged
// over its K samples, mean ± s.e. over images; diverged samples are left out.
func (r *Job) classify(rep *Report, clf *layers.Classifier, out []float64) error {
	d, k, n := r.Task.Dim(), r.K, len(r.Images)
	c, h, w := r.Task.C, r.Task.H, r.Task.W
	truth := make([]float32, n*d)
	for i, q := range r.Truth {
		for j, v := range q {
			truth[i*d+j] = float32(v)
		}
	}
	x := make([]float32, n*k*d)
	for i, v := range out {
		x[i] = float32(v)
	}
	tf, tc := classifierOutputs(clf, truth, n, c, h, w)
	xf, xc := classifierOutputs(clf, x, n*k, c, h, w)
	ref := tc
	rep.ClassReference = "the classifier's class of the truth (--in has no labels)"
	if r.Labels != nil {
		ref = r.Labels
		rep.ClassReference = "label"
	}
	var fdist, agree []float64
	for i := range n {
		var fs, as float64
		finite := 0
		for s := range k {
			row := i*k + s
			if Diverged(out[row*d : (row+1)*d]) {
				continue
			}
			finite++
			for j, v := range xf[row] {
				fs += (v - tf[i][j]) * (v - tf[i][j])
			}
			if xc[row] == ref[i] {
				as++
			}
		}
		if finite > 0 {
			fdist = append(fdist, fs/float64(finite))
			agree = append(agree, as/float64(finite))
			rep.PerImage.FDist[i], rep.PerImage.Agree[i] = fs/float64(finite), as/float64(finite)
		}
	}
	fd, ag := sample.MeanSE(fdist), sample.MeanSE(agree)
	rep.FDist, rep.FDistSE, rep.ClassAgreement, rep.ClassAgreeSE = &fd.Mean, &fd.SE, &ag.Mean, &ag.SE
	return nil
}

// nanSlice is n NaNs: per-image measures not (yet) measured.
func nanSlice(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// Diverged reports whether a restoration holds a NaN or an infinity.
func Diverged(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

// Write writes the restorations (clipped by Measure) to every .npy and the grid to every .png, each
// atomically.
func (r *Job) Write(outs []string, out []float64) error {
	d, k, n := r.Task.Dim(), r.K, len(r.Images)
	var x []float32
	for _, o := range outs {
		if filepath.Ext(o) != ".npy" {
			continue
		}
		if x == nil {
			x = make([]float32, len(out))
			for i, v := range out {
				x[i] = float32(v)
			}
		}
		if err := data.WriteNPY32(o, x, n*k, d); err != nil {
			return err
		}
	}
	var tiles []float32
	for _, o := range outs {
		if filepath.Ext(o) != ".png" {
			continue
		}
		if tiles == nil {
			tiles = make([]float32, 0, n*(k+2)*d)
			for i := range n {
				for _, v := range r.Degraded(i) {
					tiles = append(tiles, float32(v))
				}
				for _, v := range out[i*k*d : (i+1)*k*d] {
					tiles = append(tiles, float32(v))
				}
				for _, v := range r.Truth[i] {
					tiles = append(tiles, float32(v))
				}
			}
		}
		scale := 1
		if r.Task.H <= 32 {
			scale = 2
		}
		if err := imagedata.WriteGrid(o, tiles, n*(k+2), r.Task.C, r.Task.H, r.Task.W, k+2, scale); err != nil {
			return err
		}
	}
	return nil
}

// Summary is the one-line report.
func (rep *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "restore %s σ_y %g, %s (%s, %s, %d steps): %d images × %d: PSNR %.2f ± %.2f dB (degraded %.2f), SSIM %.3f ± %.3f",
		rep.Task.Name, rep.SigmaY, rep.Method.Name, rep.Method.Sampler, rep.Method.Grid, rep.Method.Steps, rep.N, rep.K,
		rep.PSNR, rep.PSNRSE, rep.PSNRDegraded, rep.SSIM, rep.SSIMSE)
	if rep.PSNRMeanOfK != nil {
		fmt.Fprintf(&b, ", PSNR of the mean of %d %.2f", rep.K, *rep.PSNRMeanOfK)
	}
	if rep.FDist != nil {
		fmt.Fprintf(&b, ", FDist %.4f ± %.4f, class agreement %.3f ± %.3f", *rep.FDist, *rep.FDistSE, *rep.ClassAgreement, *rep.ClassAgreeSE)
	}
	fmt.Fprintf(&b, ", RMS(Ax − y) %.3g (σ_y %g), NFE %d, VJPs %d, max |x| before clipping %.3g, %.1fs; wrote %s",
		rep.RMSResidual, rep.SigmaY, rep.NFE, rep.VJP, rep.MaxAbsPreclip, rep.WallSeconds, strings.Join(rep.Outputs, ", "))
	return b.String()
}
