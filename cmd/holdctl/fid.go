package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/layers"
	"holdgo/sample"
	"holdgo/torchfile"
	"holdgo/train"
)

// inceptionHelp says where the FID Inception weights come from.
const inceptionHelp = "pytorch-fid's pt_inception-2015-12-05-6726825d.pth, from " +
	"https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/pt_inception-2015-12-05-6726825d.pth " +
	"(download it where you have internet and copy it here), or the same tensors as .safetensors"

// fidCommand computes FID and KID between two image sets:
//
//	holdctl fid --features fmnist-classifier.safetensors --ref fashion-mnist:DIR --samples run/ --nfe 150 --json
func fidCommand() *cli.Command {
	return &cli.Command{
		Name:  "fid",
		Usage: "Fréchet distance (FID) and kernel distance (KID) between reference images and samples",
		Description: "Each of --ref and --samples is a data set (KIND:PATH as in 'holdctl train'), a folder of PNG/JPEG\n" +
			"files, a .npy of images (n, C·H·W) in [−1, 1], a trained run (directory or checkpoint: --n samples are\n" +
			"drawn with --sampler/--nfe), or a statistics file (.npz with mu and sigma, as pytorch-fid's). Images are\n" +
			"quantised to 8 bits, then --features maps them to feature vectors: 'inception:WEIGHTS' (pytorch-fid's\n" +
			"Inception-v3; " + inceptionHelp + ") or a classifier checkpoint from 'holdctl classifier train'.\n" +
			"FD needs more images than the feature dimension; KID (clean-fid: unbiased MMD², cubic kernel, 100 subsets\n" +
			"of ≤ 1000) needs 2, and is null when either side is a statistics file.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "ref", Usage: "reference images or statistics (.npz)"},
			&cli.StringFlag{Name: "samples", Usage: "images to score, a trained run, or statistics (.npz)"},
			&cli.StringFlag{Name: "features", Usage: "inception:WEIGHTS.pth|.safetensors, or a classifier checkpoint"},
			&cli.IntFlag{Name: "n", Value: 10000, Usage: "samples to draw from a trained run; also caps the images taken from --samples"},
			&cli.IntFlag{Name: "ref-n", Usage: "use at most this many reference images (0: all)"},
			&cli.StringFlag{Name: "image-shape", Usage: "C,H,W of .npy images (default: the classifier's input, or square with 1 or 3 channels)"},
			&cli.StringFlag{Name: "save-stats", Usage: "write the reference statistics (mu, sigma) to this .npz"},
			&cli.BoolFlag{Name: "kid-only", Usage: "report KID only (FD needs more images than feature dimensions)"},
			&cli.IntFlag{Name: "batch", Value: 50, Usage: "images per feature-network batch"},
			&cli.IntFlag{Name: "kid-subsets", Value: fid.DefaultKID.Subsets, Usage: "KID subsets"},
			&cli.IntFlag{Name: "kid-subset-size", Value: fid.DefaultKID.SubsetSize, Usage: "KID subset size"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the sampler and of the KID subsets"},
			&cli.BoolFlag{Name: "raw-weights", Usage: "sample a run with its raw weights instead of the EMA"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object: fid, kid, kid_se, n"},
			forceFlag(),
			deviceFlag(),
		}, samplerFlags()...),
		Before: oneProcess("fid"),
		Action: runFID,
	}
}

// fidReport is the result; the JSON keys are stable. Null fields were not
// computed (KID from statistics files, FD with --kid-only).
type fidReport struct {
	FID      *float64 `json:"fid"`
	KID      *float64 `json:"kid"`
	KIDSE    *float64 `json:"kid_se"`
	N        int      `json:"n"`
	RefN     int      `json:"ref_n"`
	Features string   `json:"features"`
	Dim      int      `json:"dim"`
	// Sampling describes the samples drawn from a trained run (--samples RUN); nil otherwise.
	Sampling *samplingReport `json:"sampling,omitempty"`
}

// samplingReport is how the samples of a trained run were drawn and how they came out, before the
// 8-bit quantisation the features see: the largest pixel magnitude, the share of samples with a pixel
// beyond ±1.5, and the samples that diverged (NaN, Inf or beyond sample.DivergedBound: left out).
type samplingReport struct {
	Sampler  string  `json:"sampler"`
	Grid     string  `json:"grid"`
	NFE      int     `json:"nfe"`
	Seed     uint64  `json:"seed"`
	Seconds  float64 `json:"seconds"`
	Diverged int     `json:"diverged"`
	MaxAbs   float64 `json:"max_abs"`
	Beyond15 float64 `json:"frac_beyond_1_5"`
}

// fidSide is one of --ref and --samples: features or statistics.
type fidSide struct {
	feats   []float32
	stats   *fid.Stats
	n       int
	sampled *samplingReport // set when the side was sampled from a trained run
}

func runFID(c *cli.Context) error {
	ref, samples, feat := c.String("ref"), c.String("samples"), c.String("features")
	if ref == "" || samples == "" {
		return usageErr("fid needs --ref and --samples (data sets, image folders, .npy images, a trained run or .npz statistics)")
	}
	if c.Int("n") < 1 || c.Int("ref-n") < 0 || c.Int("batch") < 1 || c.Int("kid-subsets") < 1 || c.Int("kid-subset-size") < 2 {
		return usageErr("fid: --n, --batch and --kid-subsets must be ≥ 1, --kid-subset-size ≥ 2, --ref-n ≥ 0")
	}
	if err := checkInts(c, intRange{name: "n", lo: 1, hi: 1 << 30}, intRange{name: "ref-n", lo: 0, hi: 1 << 30, note: "0: all"},
		intRange{name: "batch", lo: 1, hi: 4096}, intRange{name: "kid-subsets", lo: 1, hi: 1 << 20},
		intRange{name: "kid-subset-size", lo: 2, hi: 1 << 20}); err != nil {
		return err
	}
	if err := setThreads(c); err != nil {
		return err
	}
	if path := c.String("save-stats"); path != "" {
		guard := outpath.New(c.Bool("force"))
		guard.Input(specPath(ref), specPath(samples), strings.TrimPrefix(feat, "inception:"))
		if err := checkOutputs(guard, output{"save-stats", path, outpath.NPZ}); err != nil {
			return err
		}
	}
	bothStats := isNPZ(ref) && isNPZ(samples)
	var ext fid.Extractor
	if !bothStats {
		if feat == "" {
			return usageErr("fid needs --features inception:WEIGHTS (%s) or a classifier checkpoint from 'holdctl classifier train'", inceptionHelp)
		}
		var err error
		if ext, err = openExtractor(feat); err != nil {
			return cli.Exit("holdctl: fid: "+err.Error(), 2)
		}
		fmt.Fprintf(c.App.ErrWriter, "features: %s\n", ext.Name())
	}
	a, err := loadFIDSide(c, "ref", ref, ext, c.Int("ref-n"))
	if err != nil {
		return err
	}
	b, err := loadFIDSide(c, "samples", samples, ext, c.Int("n"))
	if err != nil {
		return err
	}
	rep := fidReport{N: b.n, RefN: a.n, Sampling: b.sampled}
	if ext != nil {
		rep.Features, rep.Dim = ext.Name(), ext.Dim()
	} else {
		rep.Features, rep.Dim = "statistics files", a.stats.Dim
	}
	if path := c.String("save-stats"); path != "" {
		if a.feats == nil {
			return usageErr("fid: --save-stats needs images as --ref (it is already statistics)")
		}
		st, err := fid.ComputeStats(a.feats, ext.Dim())
		if err != nil {
			return cli.Exit("holdctl: fid: "+err.Error(), 2)
		}
		if err := fid.SaveStats(path, st); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "wrote reference statistics %s (mu %d, sigma %d×%d)\n", path, st.Dim, st.Dim, st.Dim)
	}
	if !c.Bool("kid-only") {
		v, err := frechet(a, b, rep.Dim)
		if err != nil {
			return err
		}
		rep.FID = &v
	}
	if a.feats != nil && b.feats != nil {
		opt := fid.KIDOptions{Subsets: c.Int("kid-subsets"), SubsetSize: c.Int("kid-subset-size"), Seed: c.Uint64("seed")}
		k, se, err := fid.KID(a.feats, b.feats, rep.Dim, opt)
		if err != nil {
			return cli.Exit("holdctl: fid: "+err.Error(), 2)
		}
		rep.KID, rep.KIDSE = &k, &se
	} else if c.Bool("kid-only") {
		return usageErr("fid: --kid-only needs images on both sides (KID cannot be computed from statistics files)")
	}
	return printFID(c.App.Writer, rep, c.Bool("json"))
}

// frechet is FD between the two sides, with a clear error when a side has
// too few images for a covariance of full rank.
func frechet(a, b fidSide, dim int) (float64, error) {
	var st [2]*fid.Stats
	for i, s := range []fidSide{a, b} {
		if s.stats != nil {
			st[i] = s.stats
			continue
		}
		if s.n <= dim {
			return 0, usageErr("fid: %d images for %d-d features: FD needs more images than feature dimensions (its covariance is singular otherwise); give ≥ %d images, or --kid-only for KID, which works from 2",
				s.n, dim, dim+1)
		}
		var err error
		if st[i], err = fid.ComputeStats(s.feats, dim); err != nil {
			return 0, err
		}
	}
	if st[0].Dim != st[1].Dim {
		return 0, usageErr("fid: statistics of dimension %d and %d (computed with different feature networks?)", st[0].Dim, st[1].Dim)
	}
	return fid.FrechetDistance(st[0], st[1])
}

func printFID(w io.Writer, rep fidReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		return enc.Encode(rep)
	}
	num := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.6g", *p)
	}
	fmt.Fprintf(w, "FID %s   KID %s ± %s   (%d samples, %d reference; %s)\n", num(rep.FID), num(rep.KID), num(rep.KIDSE), rep.N, rep.RefN, rep.Features)
	if s := rep.Sampling; s != nil {
		fmt.Fprintf(w, "samples: %s on the %s grid, NFE %d, %.1f s; %d diverged, largest |pixel| %.3g, %.1f %% with a pixel beyond ±1.5\n",
			s.Sampler, s.Grid, s.NFE, s.Seconds, s.Diverged, s.MaxAbs, 100*s.Beyond15)
	}
	return nil
}

func isNPZ(p string) bool { return strings.EqualFold(filepath.Ext(p), ".npz") }

// openExtractor opens the feature network --features names.
func openExtractor(spec string) (fid.Extractor, error) {
	if path, ok := strings.CutPrefix(spec, "inception:"); ok {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--features %s: %v; the weights are %s", spec, err, inceptionHelp)
		}
		var src layers.WeightSource
		var err error
		if strings.EqualFold(filepath.Ext(path), ".safetensors") {
			src, err = checkpoint.Load(path)
		} else {
			src, err = torchfile.Load(path)
		}
		if err != nil {
			return nil, err
		}
		net, err := layers.LoadInception(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &fid.InceptionFeatures{Net: net}, nil
	}
	if _, err := os.Stat(spec); err != nil {
		return nil, fmt.Errorf("--features %s: %v (want inception:WEIGHTS or a classifier checkpoint)", spec, err)
	}
	m, _, err := fid.LoadClassifier(spec)
	if err != nil {
		return nil, fmt.Errorf("--features %s: %v (want inception:WEIGHTS or a classifier checkpoint from 'holdctl classifier train')", spec, err)
	}
	return fid.NewClassifierFeatures(m), nil
}

// loadFIDSide reads statistics, or images whose features it computes.
func loadFIDSide(c *cli.Context, flag, spec string, ext fid.Extractor, limit int) (fidSide, error) {
	if isNPZ(spec) {
		st, err := fid.LoadStats(spec)
		if err != nil {
			return fidSide{}, cli.Exit(fmt.Sprintf("holdctl: fid --%s: %v", flag, err), 2)
		}
		if ext != nil && st.Dim != ext.Dim() {
			return fidSide{}, usageErr("fid --%s %s: statistics of dimension %d, but the features are %d-d", flag, spec, st.Dim, ext.Dim())
		}
		return fidSide{stats: st}, nil
	}
	var sampled samplingReport
	src, err := openImages(c, flag, spec, ext, &sampled)
	if err != nil {
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			return fidSide{}, err
		}
		return fidSide{}, cli.Exit(fmt.Sprintf("holdctl: fid --%s %s: %v", flag, spec, err), 2)
	}
	if err := ext.Check(src.C, src.H, src.W); err != nil {
		return fidSide{}, usageErr("fid --%s %s: %v", flag, spec, err)
	}
	if limit > 0 {
		src.N = min(src.N, limit)
	}
	start := time.Now()
	w := c.App.ErrWriter
	last := time.Time{}
	feats, err := fid.Extract(ext, src, c.Int("batch"), func(done int) {
		if time.Since(last) > 2*time.Second || done == src.N {
			last = time.Now()
			rate := float64(done) / time.Since(start).Seconds()
			fmt.Fprintf(w, "%s: features of %d/%d images (%.0f images/s, ETA %s)\n", flag, done, src.N, rate,
				time.Duration(float64(src.N-done)/rate*float64(time.Second)).Round(time.Second))
		}
	})
	if err != nil {
		return fidSide{}, err
	}
	side := fidSide{feats: feats, n: src.N}
	if sampled.Sampler != "" {
		side.sampled = &sampled
	}
	return side, nil
}

// openImages opens a data set, an image folder, a .npy of images or a
// trained run (sampled here).
func openImages(c *cli.Context, flag, spec string, ext fid.Extractor, sampled *samplingReport) (fid.ImageSource, error) {
	fromDataset := func(d *imagedata.Dataset) fid.ImageSource {
		return fid.ImageSource{N: d.N, C: d.C, H: d.H, W: d.W, Fill: func(i int, dst []float32) { d.Scale(dst, d.Pixels(i), false, nil) }}
	}
	if imagedata.IsSpec(spec) {
		d, err := imagedata.Open(spec, imagedata.Options{})
		if err != nil {
			return fid.ImageSource{}, err
		}
		return fromDataset(d), nil
	}
	if strings.EqualFold(filepath.Ext(spec), ".npy") {
		a, err := data.ReadNPY(spec)
		if err != nil {
			return fid.ImageSource{}, err
		}
		if a.Rows() < 1 || a.Cols() < 1 {
			return fid.ImageSource{}, usageErr("fid --%s %s: shape %v holds no images (want (n, C·H·W))", flag, spec, a.Shape)
		}
		ch, h, w, err := npyImageShape(c.String("image-shape"), a.Cols(), ext)
		if err != nil {
			return fid.ImageSource{}, usageErr("fid --%s %s: %v", flag, spec, err)
		}
		x := a.Float32()
		return rowsSource(x, ch, h, w)
	}
	st, err := os.Stat(spec)
	if err != nil {
		return fid.ImageSource{}, err
	}
	if st.IsDir() {
		if _, err := os.Stat(train.CheckpointPath(spec)); err != nil { // a folder of images, not a run
			d, err := imagedata.ReadImages(spec, "")
			if err != nil {
				return fid.ImageSource{}, err
			}
			return fromDataset(d), nil
		}
	}
	return sampleRun(c, flag, spec, sampled)
}

// rowsSource serves rows of x as C×H×W images, rejecting NaN and Inf.
func rowsSource(x []float32, ch, h, w int) (fid.ImageSource, error) {
	dim := ch * h * w
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fid.ImageSource{}, fmt.Errorf("image %d holds NaN or Inf (a diverged sampler?)", i/dim)
		}
	}
	return fid.ImageSource{N: len(x) / dim, C: ch, H: h, W: w, Fill: func(i int, dst []float32) { copy(dst, x[i*dim:(i+1)*dim]) }}, nil
}

// npyImageShape is the C×H×W of .npy rows of length cols: --image-shape,
// else the classifier's input, else a square with 1 or 3 channels.
func npyImageShape(flag string, cols int, ext fid.Extractor) (int, int, int, error) {
	if flag != "" {
		var ch, h, w int
		if n, err := fmt.Sscanf(flag, "%d,%d,%d", &ch, &h, &w); n != 3 || err != nil || ch < 1 || h < 1 || w < 1 {
			return 0, 0, 0, fmt.Errorf("--image-shape %q: want C,H,W such as 1,28,28", flag)
		}
		if ch > 4 || h > imagedata.MaxSide || w > imagedata.MaxSide { // the product cannot wrap
			return 0, 0, 0, fmt.Errorf("--image-shape %q: want C ≤ 4 and H, W ≤ %d", flag, imagedata.MaxSide)
		}
		if ch*h*w != cols {
			return 0, 0, 0, fmt.Errorf("--image-shape %s holds %d values, the rows have %d", flag, ch*h*w, cols)
		}
		return ch, h, w, nil
	}
	if cf, ok := ext.(*fid.ClassifierFeatures); ok {
		cfg := cf.Model.Config
		if cols != cfg.Channels*cfg.Height*cfg.Width {
			return 0, 0, 0, fmt.Errorf("rows of %d values, but the classifier takes %d×%d×%d images (%d values)",
				cols, cfg.Channels, cfg.Height, cfg.Width, cfg.Channels*cfg.Height*cfg.Width)
		}
		return cfg.Channels, cfg.Height, cfg.Width, nil
	}
	for _, ch := range []int{1, 3} {
		if s := int(math.Round(math.Sqrt(float64(cols / ch)))); s*s*ch == cols {
			return ch, s, s, nil
		}
	}
	return 0, 0, 0, fmt.Errorf("rows of %d values are not square images with 1 or 3 channels; give --image-shape C,H,W", cols)
}

// sampleRun draws --n samples of a trained image model with the sampler flags and describes them in rep.
func sampleRun(c *cli.Context, flag, spec string, rep *samplingReport) (fid.ImageSource, error) {
	m, err := train.LoadModel(spec, c.Bool("raw-weights"), "")
	if err != nil {
		return fid.ImageSource{}, usageErr("fid --%s %s: not a data set, image folder, .npy or .npz, and not a trained run: %v", flag, spec, err)
	}
	d, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return fid.ImageSource{}, usageErr("fid --%s %s: the run models %s, not images", flag, spec, m.Source.Name())
	}
	s, err := samplerSpecFrom(c).Build(m.SDE, m.Score, d.Dimension())
	if err != nil {
		return fid.ImageSource{}, usageErr("%v", err)
	}
	draw, err := samplerOn(c.String("device"), s, m)
	if err != nil {
		return fid.ImageSource{}, err
	}
	n := c.Int("n")
	if err := checkBudget("n", int64(n)*int64(m.SDE.Blocks()), int64(d.Dimension())*8); err != nil {
		return fid.ImageSource{}, err
	}
	start := time.Now()
	fmt.Fprintf(c.App.ErrWriter, "%s: sampling %d images with %s on %s …\n", flag, n, s.Method.Name(), c.String("device"))
	res, err := draw(n, c.Uint64("seed"))
	if err != nil {
		return fid.ImageSource{}, err
	}
	q := sample.FirstBlock(res.X, n, m.SDE.Blocks(), d.Dimension())
	secs := time.Since(start).Seconds()
	fmt.Fprintf(c.App.ErrWriter, "%s: %d samples, NFE %d, %.1fs\n", flag, n, res.NFE, secs)
	*rep = samplingReport{Sampler: s.Method.Name(), Grid: c.String("grid"), NFE: res.NFE, Seed: c.Uint64("seed"), Seconds: secs, Diverged: res.Diverged}
	dim := d.Dimension()
	beyond := 0
	for i := 0; i+dim <= len(q); i += dim {
		far := false
		for _, v := range q[i : i+dim] {
			a := math.Abs(float64(v))
			if a > rep.MaxAbs || a != a {
				rep.MaxAbs = a
			}
			far = far || !(a <= 1.5)
		}
		if far {
			beyond++
		}
	}
	rep.Beyond15 = float64(beyond) / float64(n)
	warnDiverged(c.App.ErrWriter, res.Diverged, n, "FID leaves them out")
	q, _ = sample.ConvergedRows(q, d.Dimension())
	return rowsSource(q, d.C, d.H, d.W)
}
