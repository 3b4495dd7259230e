package fid

import (
	"errors"
	"fmt"
	"math"

	"holdgo/layers"
	"holdgo/tensor"
)

// Extractor is a feature network: Inception-v3 (InceptionFeatures) or a
// trained classifier (ClassifierFeatures).
type Extractor interface {
	Name() string
	Dim() int
	// Check reports an image shape (C×H×W) the network cannot take.
	Check(c, h, w int) error
	// Features maps n images (n·C·H·W values in [−1, 1]) to n×Dim features.
	Features(x []float32, n, c, h, w int) ([]float32, error)
}

// InceptionFeatures is the FID Inception network as a feature extractor.
type InceptionFeatures struct{ Net *layers.Inception }

// Name describes the network.
func (e *InceptionFeatures) Name() string {
	if e.Net.Divisor == 1 {
		return "Inception-v3 (pytorch-fid), 2048-d pool3"
	}
	return fmt.Sprintf("Inception-v3 (pytorch-fid) at 1/%d width, %d-d pool3", e.Net.Divisor, e.Net.FeatureDim())
}

// Dim is the feature dimension.
func (e *InceptionFeatures) Dim() int { return e.Net.FeatureDim() }

// Check accepts 1- or 3-channel images of any size (they are resized to 299×299).
func (e *InceptionFeatures) Check(c, h, w int) error {
	if c != 1 && c != 3 || h < 1 || w < 1 {
		return fmt.Errorf("images are %d×%d×%d (C×H×W): Inception takes RGB (3 channels) or gray (1, repeated to RGB) images", c, h, w)
	}
	return nil
}

// Features maps images in [−1, 1] to [0, 1] (pytorch-fid's input range),
// repeats gray images to RGB and runs the network.
func (e *InceptionFeatures) Features(x []float32, n, c, h, w int) ([]float32, error) {
	if err := e.Check(c, h, w); err != nil {
		return nil, err
	}
	if n < 1 || len(x) != n*c*h*w {
		return nil, errors.New("inception features: image buffer does not match the image shape")
	}
	plane := h * w
	in := make([]float32, n*3*plane)
	for i := range n {
		for ch := range 3 {
			src := x[(i*c+min(ch, c-1))*plane : (i*c+min(ch, c-1)+1)*plane]
			dst := in[(i*3+ch)*plane : (i*3+ch+1)*plane]
			for k, v := range src {
				dst[k] = (v + 1) / 2
			}
		}
	}
	return append([]float32(nil), e.Net.Forward(tensor.FromSlice(in, n, 3, h, w)).Data()...), nil
}

// Quantize maps images in [−1, 1] to the nearest of the 256 levels an 8-bit
// image file holds, clipping values outside: features of generated samples
// are then those of the PNG files other FID tools would read.
func Quantize(x []float32) {
	for i, v := range x {
		q := math.Round((float64(min(max(v, -1), 1)) + 1) / 2 * 255)
		x[i] = float32(q/255*2 - 1)
	}
}

// ImageSource serves n images of C×H×W values in [−1, 1].
type ImageSource struct {
	N, C, H, W int
	// Fill writes image i into dst (C·H·W values).
	Fill func(i int, dst []float32)
}

// Extract computes the features of every image of src in batches,
// quantising each image to 8 bits first; progress (may be nil) is called
// after each batch with the images done.
func Extract(e Extractor, src ImageSource, batch int, progress func(done int)) ([]float32, error) {
	if err := e.Check(src.C, src.H, src.W); err != nil {
		return nil, err
	}
	if src.N < 1 || batch < 1 {
		return nil, fmt.Errorf("fid features: %d images in batches of %d", src.N, batch)
	}
	dim := src.C * src.H * src.W
	out := make([]float32, 0, src.N*e.Dim())
	x := make([]float32, batch*dim)
	for lo := 0; lo < src.N; lo += batch {
		b := min(batch, src.N-lo)
		for k := range b {
			src.Fill(lo+k, x[k*dim:(k+1)*dim])
		}
		Quantize(x[:b*dim])
		f, err := e.Features(x[:b*dim], b, src.C, src.H, src.W)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
		if progress != nil {
			progress(lo + b)
		}
	}
	return out, nil
}
