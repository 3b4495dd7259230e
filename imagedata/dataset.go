// Package imagedata reads image data sets — IDX (MNIST, Fashion-MNIST; raw
// or gzip), CIFAR-10 binary batches, and folders or tar.gz archives of
// PNG/JPEG files with optional class sub-folders — into 8-bit pixels, and
// serves them as a data.Source scaled to [−1, 1] with optional horizontal
// flips and uniform dequantisation. It also writes sample grids as PNG.
//
// Every reader checks sizes against its format and names the file in its
// errors: a missing, truncated or malformed file is never read as zeros.
package imagedata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"holdgo/rng"
)

// Dataset is N images of C×H×W 8-bit pixels (channel planes, row-major).
type Dataset struct {
	N, C, H, W int
	Pix        []uint8 // N·C·H·W
	Labels     []int   // class of each image (nil when the format has none)
	Classes    []string

	Flip       bool // Sample mirrors each image horizontally with probability ½
	Dequantize bool // Sample adds U[0, 1) to every pixel level: x = (k + U)/256 (NLL evaluation)

	name string
}

// Options control how a data set is served.
type Options struct {
	Flip       bool
	Dequantize bool
}

// Name identifies the data set (the spec it was opened with).
func (d *Dataset) Name() string { return d.name }

// Dimension is C·H·W.
func (d *Dataset) Dimension() int { return d.C * d.H * d.W }

// Len is the number of images.
func (d *Dataset) Len() int { return d.N }

// Pixels returns the 8-bit levels of image i.
func (d *Dataset) Pixels(i int) []uint8 {
	n := d.Dimension()
	return d.Pix[i*n : (i+1)*n]
}

// Scale maps the levels of one image to dst in [−1, 1]: 2k/255 − 1, or with
// dequantisation 2(k + U)/256 − 1 (docs/math.md#likelihood), mirrored if flip.
func (d *Dataset) Scale(dst []float32, pix []uint8, flip bool, r *rng.RNG) {
	w := d.W
	for row := 0; row < d.C*d.H; row++ {
		src, out := pix[row*w:(row+1)*w], dst[row*w:(row+1)*w]
		for x, k := range src {
			if flip {
				x = w - 1 - x
			}
			if d.Dequantize {
				out[x] = float32((float64(k)+r.Float64())/256*2 - 1)
			} else {
				out[x] = float32(k)/255*2 - 1
			}
		}
	}
}

// Sample fills dst (n images × Dimension) with images drawn uniformly with
// replacement, flipped and dequantised as configured (data.Source).
func (d *Dataset) Sample(r *rng.RNG, dst []float32) {
	if d.N == 0 {
		return
	}
	n := d.Dimension()
	for off := 0; off+n <= len(dst); off += n {
		i := r.IntN(d.N)
		flip := d.Flip && r.Float64() < 0.5
		d.Scale(dst[off:off+n], d.Pixels(i), flip, r)
	}
}

// Shape returns a data set that holds no images, only the name and the shape of spec's (C×H×W): what
// a shipped model (an exported checkpoint) needs to build its network and write its samples without the
// data set on the machine. Its Sample leaves dst as it is (there is nothing to draw).
func Shape(spec string, c, h, w int) (*Dataset, error) {
	if c < 1 || h < 1 || w < 1 || c > 4 || h > MaxSide || w > MaxSide {
		return nil, fmt.Errorf("imagedata: image shape %d×%d×%d of %s: want 1–4 channels and sides 1–%d", c, h, w, spec, MaxSide)
	}
	return &Dataset{C: c, H: h, W: w, name: spec}, nil
}

// Kinds of data-set specs Open accepts (KIND:PATH[#SUBSET]).
var Kinds = []string{"fashion-mnist", "mnist", "idx", "cifar10", "images"}

// IsSpec reports whether spec names an image data set (KIND:PATH).
func IsSpec(spec string) bool {
	kind, _, ok := strings.Cut(spec, ":")
	if !ok {
		return false
	}
	for _, k := range Kinds {
		if kind == k {
			return true
		}
	}
	return false
}

// Open reads the data set a spec names:
//
//	fashion-mnist:DIR, mnist:DIR   DIR/train-images-idx3-ubyte[.gz] (#test: t10k-…), labels if present
//	idx:FILE                       one IDX image file (raw or gzip)
//	cifar10:DIR                    DIR/data_batch_1..5.bin (#test: test_batch.bin); cifar10:FILE.bin one batch
//	images:PATH                    PNG/JPEG files under a folder or in a .tgz/.tar.gz archive, class = sub-folder;
//	                               #SUB keeps only the files under SUB/ (images:cifar10-jpeg.tgz#train)
func Open(spec string, opt Options) (*Dataset, error) {
	kind, path, ok := strings.Cut(spec, ":")
	if !ok || path == "" {
		return nil, fmt.Errorf("imagedata: data set %q: want KIND:PATH with KIND one of %s", spec, strings.Join(Kinds, ", "))
	}
	path, subset, _ := strings.Cut(path, "#")
	var (
		d   *Dataset
		err error
	)
	switch kind {
	case "fashion-mnist", "mnist":
		d, err = openIDXDir(path, subset)
	case "idx":
		d, err = ReadIDXImages(path)
	case "cifar10":
		d, err = openCIFAR10(path, subset)
	case "images":
		d, err = ReadImages(path, subset)
	default:
		return nil, fmt.Errorf("imagedata: unknown data set kind %q in %q (want one of %s)", kind, spec, strings.Join(Kinds, ", "))
	}
	if err != nil {
		return nil, err
	}
	if d.N == 0 {
		return nil, fmt.Errorf("imagedata: %s holds no images", spec)
	}
	d.name, d.Flip, d.Dequantize = spec, opt.Flip, opt.Dequantize
	return d, nil
}

// firstExisting returns the first of the paths that exists.
func firstExisting(paths ...string) (string, error) {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("imagedata: none of %s exists", strings.Join(paths, ", "))
}

func openIDXDir(dir, subset string) (*Dataset, error) {
	prefix := "train"
	switch subset {
	case "", "train":
	case "test", "t10k":
		prefix = "t10k"
	default:
		return nil, fmt.Errorf("imagedata: IDX subset %q (want train or test)", subset)
	}
	img, err := firstExisting(filepath.Join(dir, prefix+"-images-idx3-ubyte"), filepath.Join(dir, prefix+"-images-idx3-ubyte.gz"))
	if err != nil {
		return nil, err
	}
	d, err := ReadIDXImages(img)
	if err != nil {
		return nil, err
	}
	if lab, err := firstExisting(filepath.Join(dir, prefix+"-labels-idx1-ubyte"), filepath.Join(dir, prefix+"-labels-idx1-ubyte.gz")); err == nil {
		labels, err := ReadIDXLabels(lab)
		if err != nil {
			return nil, err
		}
		if len(labels) != d.N {
			return nil, fmt.Errorf("imagedata: %s has %d labels for %d images in %s", lab, len(labels), d.N, img)
		}
		d.Labels = labels
	}
	return d, nil
}
