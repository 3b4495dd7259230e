package layers

import (
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/tensor"
)

// ClassifierConfig sizes the small CNN classifier whose penultimate layer
// is holdgo's offline feature network for FID on 28×28 data (the usual
// "FID with a LeNet"):
//
//	x (N, C, H, W) in [−1, 1]
//	conv 3×3 pad 1,        C → W1, SiLU          (H, W)
//	conv 3×3 stride 2 pad 1, W1 → W2, SiLU       (⌈H/2⌉, ⌈W/2⌉)
//	conv 3×3 stride 2 pad 1, W2 → W2, SiLU       (⌈H/4⌉, ⌈W/4⌉)
//	flatten, Linear → Features, SiLU             features (N, Features)
//	Linear → Classes                             logits (N, Classes)
type ClassifierConfig struct {
	Channels, Height, Width int // input image
	Width1, Width2          int // convolution channels
	Features                int // penultimate width: the FID feature dimension
	Classes                 int
}

// DefaultClassifier is the configuration `holdctl classifier train` uses for
// C×H×W images and the given number of classes.
func DefaultClassifier(c, h, w, classes int) ClassifierConfig {
	return ClassifierConfig{Channels: c, Height: h, Width: w, Width1: 32, Width2: 64, Features: 128, Classes: classes}
}

// Validate reports a configuration that cannot build a network.
func (c ClassifierConfig) Validate() error {
	if c.Channels < 1 || c.Height < 4 || c.Width < 4 || c.Width1 < 1 || c.Width2 < 1 || c.Features < 1 || c.Classes < 2 {
		return fmt.Errorf("classifier: need channels, widths, features ≥ 1, images ≥ 4×4 and ≥ 2 classes (got %+v)", c)
	}
	return nil
}

// flat is the length of the flattened last convolution output.
func (c ClassifierConfig) flat() int {
	h := tensor.ConvOutSize(tensor.ConvOutSize(c.Height, 3, 2, 1), 3, 2, 1)
	w := tensor.ConvOutSize(tensor.ConvOutSize(c.Width, 3, 2, 1), 3, 2, 1)
	return c.Width2 * h * w
}

// Classifier is the CNN of ClassifierConfig. Parameters are named
// conv{1,2,3}.{weight,bias} and fc{1,2}.{weight,bias} in PyTorch layouts.
type Classifier struct {
	Config ClassifierConfig
	Params *Params
}

// NewClassifier builds the network initialised as PyTorch's Conv2d and
// Linear defaults do (uniform ±1/√fan_in for weight and bias).
func NewClassifier(c ClassifierConfig, r *tensor.RNG) (*Classifier, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	specs := []Spec{
		{"conv1.weight", []int{c.Width1, c.Channels, 3, 3}}, {"conv1.bias", []int{c.Width1}},
		{"conv2.weight", []int{c.Width2, c.Width1, 3, 3}}, {"conv2.bias", []int{c.Width2}},
		{"conv3.weight", []int{c.Width2, c.Width2, 3, 3}}, {"conv3.bias", []int{c.Width2}},
		{"fc1.weight", []int{c.Features, c.flat()}}, {"fc1.bias", []int{c.Features}},
		{"fc2.weight", []int{c.Classes, c.Features}}, {"fc2.bias", []int{c.Classes}},
	}
	m := &Classifier{Config: c, Params: NewParams(specs)}
	for i := 0; i < len(specs); i += 2 {
		fanIn := numel(specs[i].Shape[1:])
		bound := 1 / math.Sqrt(float64(fanIn))
		r.FillUniform(m.Params.Slice(m.Params.Data, i), -bound, bound)
		r.FillUniform(m.Params.Slice(m.Params.Data, i+1), -bound, bound)
	}
	return m, nil
}

// Forward maps images x (N, C, H, W) to the penultimate features
// (N, Features) and the logits (N, Classes).
func (m *Classifier) Forward(g *autograd.Tape, x *autograd.Value) (features, logits *autograd.Value) {
	p := m.Params.Value
	h := g.SiLU(g.Conv2d(x, p(0), p(1), 1, 1))
	h = g.SiLU(g.Conv2d(h, p(2), p(3), 2, 1))
	h = g.SiLU(g.Conv2d(h, p(4), p(5), 2, 1))
	h = g.Reshape(h, h.Shape()[0], -1)
	features = g.SiLU(g.Linear(h, p(6), p(7)))
	return features, g.Linear(features, p(8), p(9))
}

// CrossEntropy returns the mean softmax cross-entropy of logits (N, K)
// against labels and its gradient with respect to the logits,
// (softmax − onehot)/N, computed in float64 with the max subtracted.
func CrossEntropy(logits []float32, labels []int, k int) (loss float64, grad []float32, correct int) {
	n := len(labels)
	grad = make([]float32, len(logits))
	for i, y := range labels {
		row := logits[i*k : (i+1)*k]
		best, arg := math.Inf(-1), 0
		for j, v := range row {
			if float64(v) > best {
				best, arg = float64(v), j
			}
		}
		if arg == y {
			correct++
		}
		var z float64
		for _, v := range row {
			z += math.Exp(float64(v) - best)
		}
		loss += math.Log(z) - (float64(row[y]) - best)
		for j, v := range row {
			p := math.Exp(float64(v)-best) / z
			if j == y {
				p--
			}
			grad[i*k+j] = float32(p / float64(n))
		}
	}
	return loss / float64(n), grad, correct
}
