package fid

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/imagedata"
	"holdgo/layers"
	"holdgo/torchfile"
)

// What holdctl fid computes around the distances: the feature network a --features spec names, images
// from .npy rows, FD between two sides (features or statistics) and the report.

// InputError is an error of the input (too few images, mismatched statistics): holdctl exits 2. Err,
// when set, is the error it describes.
type InputError struct {
	Msg string
	Err error
}

func (e *InputError) Error() string { return e.Msg }
func (e *InputError) Unwrap() error { return e.Err }

// InceptionHelp says where the FID Inception weights come from.
const InceptionHelp = "pytorch-fid's pt_inception-2015-12-05-6726825d.pth, from " +
	"https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/pt_inception-2015-12-05-6726825d.pth " +
	"(download it where you have internet and copy it here), or the same tensors as .safetensors"

// Report is holdctl fid's result; the JSON keys are stable. Null fields were not
// computed (KID from statistics files, FD with --kid-only).
type Report struct {
	FID      *float64 `json:"fid"`
	KID      *float64 `json:"kid"`
	KIDSE    *float64 `json:"kid_se"`
	N        int      `json:"n"`
	RefN     int      `json:"ref_n"`
	Features string   `json:"features"`
	Dim      int      `json:"dim"`
	// Sampling describes the samples drawn from a trained run (--samples RUN); nil otherwise.
	Sampling *SamplingReport `json:"sampling,omitempty"`
}

// SamplingReport is how the samples of a trained run were drawn and how they came out, before the
// 8-bit quantisation the features see: the largest pixel magnitude, the share of samples with a pixel
// beyond ±1.5, and the samples that diverged (NaN, Inf or beyond sample.DivergedBound: left out).
type SamplingReport struct {
	Sampler  string  `json:"sampler"`
	Grid     string  `json:"grid"`
	NFE      int     `json:"nfe"`
	Seed     uint64  `json:"seed"`
	Seconds  float64 `json:"seconds"`
	Diverged int     `json:"diverged"`
	MaxAbs   float64 `json:"max_abs"`
	Beyond15 float64 `json:"frac_beyond_1_5"`
}

// Side is one of the two image sets: features (of N images) or statistics.
type Side struct {
	Feats   []float32
	Stats   *Stats
	N       int
	Sampled *SamplingReport // set when the side was sampled from a trained run
}

// Between is FD between the two sides of dim-d features, with an InputError when a side has too few
// images for a covariance of full rank or the statistics differ in dimension.
func Between(a, b Side, dim int) (float64, error) {
	var st [2]*Stats
	for i, s := range []Side{a, b} {
		if s.Stats != nil {
			st[i] = s.Stats
			continue
		}
		if s.N <= dim {
			return 0, &InputError{Msg: fmt.Sprintf("fid: %d images for %d-d features: FD needs more images than feature dimensions (its covariance is singular otherwise); give ≥ %d images, or --kid-only for KID, which works from 2",
				s.N, dim, dim+1)}
		}
		var err error
		if st[i], err = ComputeStats(s.Feats, dim); err != nil {
			return 0, err
		}
	}
	if st[0].Dim != st[1].Dim {
		return 0, &InputError{Msg: fmt.Sprintf("fid: statistics of dimension %d and %d (computed with different feature networks?)", st[0].Dim, st[1].Dim)}
	}
	return FrechetDistance(st[0], st[1])
}

// Write prints the report: one JSON object, or a line of FID and KID (and one on the sampling).
func (rep Report) Write(w io.Writer, asJSON bool) error {
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

// IsNPZ reports whether p names a statistics file (.npz).
func IsNPZ(p string) bool { return strings.EqualFold(filepath.Ext(p), ".npz") }

// OpenExtractor opens the feature network a --features spec names: inception:WEIGHTS (.pth or
// .safetensors) or a classifier checkpoint.
func OpenExtractor(spec string) (Extractor, error) {
	if path, ok := strings.CutPrefix(spec, "inception:"); ok {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--features %s: %v; the weights are %s", spec, err, InceptionHelp)
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
		return &InceptionFeatures{Net: net}, nil
	}
	if _, err := os.Stat(spec); err != nil {
		return nil, fmt.Errorf("--features %s: %v (want inception:WEIGHTS or a classifier checkpoint)", spec, err)
	}
	m, _, err := LoadClassifier(spec)
	if err != nil {
		return nil, fmt.Errorf("--features %s: %v (want inception:WEIGHTS or a classifier checkpoint from 'holdctl classifier train')", spec, err)
	}
	return NewClassifierFeatures(m), nil
}

// RowsSource serves rows of x as C×H×W images, rejecting NaN and Inf.
func RowsSource(x []float32, ch, h, w int) (ImageSource, error) {
	dim := ch * h * w
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return ImageSource{}, fmt.Errorf("image %d holds NaN or Inf (a diverged sampler?)", i/dim)
		}
	}
	return ImageSource{N: len(x) / dim, C: ch, H: h, W: w, Fill: func(i int, dst []float32) { copy(dst, x[i*dim:(i+1)*dim]) }}, nil
}

// ParseImageShape reads holdctl fid's --image-shape: "C,H,W" in decimal digits (spaces around each
// number allowed), with 1 ≤ C ≤ 4 and 1 ≤ H, W ≤ imagedata.MaxSide.
func ParseImageShape(flag string) ([3]int, error) {
	var shape [3]int
	parts := strings.Split(flag, ",")
	bad := len(parts) != 3
	for i := 0; !bad && i < 3; i++ {
		p := strings.TrimSpace(parts[i])
		n, err := strconv.Atoi(p)
		bad = err != nil || p == "" || strings.Trim(p, "0123456789") != ""
		shape[i] = n
	}
	if bad {
		return shape, fmt.Errorf("--image-shape %q: want C,H,W in decimal, such as 1,28,28", flag)
	}
	if c, h, w := shape[0], shape[1], shape[2]; c < 1 || c > 4 || h < 1 || w < 1 || h > imagedata.MaxSide || w > imagedata.MaxSide {
		return shape, fmt.Errorf("--image-shape %q: want 1 ≤ C ≤ 4 and 1 ≤ H, W ≤ %d", flag, imagedata.MaxSide)
	}
	return shape, nil
}

// CheckImageShape refuses images (what names them) of c×h×w when --image-shape (flag, "" for none)
// says another shape.
func CheckImageShape(flag, what string, c, h, w int) error {
	if flag == "" {
		return nil
	}
	want, err := ParseImageShape(flag)
	if err != nil {
		return err
	}
	if want != [3]int{c, h, w} {
		return fmt.Errorf("--image-shape %s says %d×%d×%d, but %s are %d×%d×%d: give their shape or drop --image-shape",
			flag, want[0], want[1], want[2], what, c, h, w)
	}
	return nil
}

// NPYImageShape is the C×H×W of .npy rows of length cols: --image-shape,
// else the classifier's input, else a square with 1 or 3 channels.
func NPYImageShape(flag string, cols int, ext Extractor) (int, int, int, error) {
	if flag != "" {
		shape, err := ParseImageShape(flag)
		if err != nil {
			return 0, 0, 0, err
		}
		ch, h, w := shape[0], shape[1], shape[2] // at most 4·MaxSide², so the product cannot wrap
		if ch*h*w != cols {
			return 0, 0, 0, fmt.Errorf("--image-shape %s holds %d values, the rows have %d", flag, ch*h*w, cols)
		}
		return ch, h, w, nil
	}
	if cf, ok := ext.(*ClassifierFeatures); ok {
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

// DatasetSource serves the images of d scaled to [−1, 1].
func DatasetSource(d *imagedata.Dataset) ImageSource {
	return ImageSource{N: d.N, C: d.C, H: d.H, W: d.W, Fill: func(i int, dst []float32) { d.Scale(dst, d.Pixels(i), false, nil) }}
}

// Measure records in r the largest pixel magnitude of the samples q (n images of dim values) and the
// share of them with a pixel beyond ±1.5.
func (r *SamplingReport) Measure(q []float32, dim, n int) {
	beyond := 0
	for i := 0; i+dim <= len(q); i += dim {
		far := false
		for _, v := range q[i : i+dim] {
			a := math.Abs(float64(v))
			if a > r.MaxAbs || a != a {
				r.MaxAbs = a
			}
			far = far || !(a <= 1.5)
		}
		if far {
			beyond++
		}
	}
	r.Beyond15 = float64(beyond) / float64(n)
}

// ExtractReporting is Extract reporting to w, as "name: features of done/N images (rate, ETA)", every
// two seconds and at the end.
func ExtractReporting(ext Extractor, src ImageSource, batch int, w io.Writer, name string) ([]float32, error) {
	start := time.Now()
	last := time.Time{}
	return Extract(ext, src, batch, func(done int) {
		if time.Since(last) > 2*time.Second || done == src.N {
			last = time.Now()
			rate := float64(done) / time.Since(start).Seconds()
			fmt.Fprintf(w, "%s: features of %d/%d images (%.0f images/s, ETA %s)\n", name, done, src.N, rate,
				time.Duration(float64(src.N-done)/rate*float64(time.Second)).Round(time.Second))
		}
	})
}

// OpenNPYImages serves the rows of a .npy file (n, C·H·W) as images of the shape NPYImageShape finds
// for shape (holdctl fid --image-shape) and ext; rows that hold no images or a shape that does not fit
// are InputErrors naming flag.
func OpenNPYImages(flag, spec, shape string, ext Extractor) (ImageSource, error) {
	a, err := data.ReadNPY(spec)
	if err != nil {
		return ImageSource{}, err
	}
	if a.Rows() < 1 || a.Cols() < 1 {
		return ImageSource{}, &InputError{Msg: fmt.Sprintf("fid --%s %s: shape %v holds no images (want (n, C·H·W))", flag, spec, a.Shape)}
	}
	ch, h, w, err := NPYImageShape(shape, a.Cols(), ext)
	if err != nil {
		return ImageSource{}, &InputError{Msg: fmt.Sprintf("fid --%s %s: %v", flag, spec, err)}
	}
	return RowsSource(a.Float32(), ch, h, w)
}
