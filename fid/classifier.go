package fid

import (
	"errors"
	"fmt"

	"holdgo/autograd"
	"holdgo/checkpoint"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// classifierKey is the metadata key under which a classifier checkpoint
// stores its ClassifierInfo; its presence marks the file as a classifier.
const classifierKey = "classifier"

// ClassifierInfo is what a classifier checkpoint records besides its weights.
type ClassifierInfo struct {
	Config       layers.ClassifierConfig `json:"config"`
	Data         string                  `json:"data"`          // training data spec
	TestAccuracy float64                 `json:"test_accuracy"` // on the data set's test split
	Epochs       int                     `json:"epochs"`
	Seconds      float64                 `json:"seconds"` // wall time of the training
}

// SaveClassifier writes the classifier's weights and info as safetensors.
func SaveClassifier(path string, m *layers.Classifier, info ClassifierInfo) error {
	info.Config = m.Config
	var ts []checkpoint.Tensor
	for i, s := range m.Params.Specs() {
		ts = append(ts, checkpoint.Tensor{Name: s.Name, Shape: s.Shape, Data: m.Params.Slice(m.Params.Data, i)})
	}
	meta := map[string]string{}
	if err := checkpoint.SetJSON(meta, classifierKey, info); err != nil {
		return err
	}
	if err := checkpoint.Save(path, ts, meta); err != nil {
		return fmt.Errorf("save classifier: %w", err)
	}
	return nil
}

// IsClassifier reports whether a loaded checkpoint holds a classifier.
func IsClassifier(f *checkpoint.File) bool {
	_, ok := f.Meta[classifierKey]
	return ok
}

// LoadClassifier reads a checkpoint written by SaveClassifier.
func LoadClassifier(path string) (*layers.Classifier, ClassifierInfo, error) {
	var info ClassifierInfo
	f, err := checkpoint.Load(path)
	if err != nil {
		return nil, info, err
	}
	if !IsClassifier(f) {
		return nil, info, fmt.Errorf("%s is not a classifier checkpoint (no %q metadata; train one with 'holdctl classifier train')", path, classifierKey)
	}
	if err := f.GetJSON(classifierKey, &info); err != nil {
		return nil, info, err
	}
	m, err := layers.NewClassifier(info.Config, rng.New(0))
	if err != nil {
		return nil, info, fmt.Errorf("%s: %w", path, err)
	}
	for i, s := range m.Params.Specs() {
		if err := f.Into(s.Name, m.Params.Slice(m.Params.Data, i), s.Shape...); err != nil {
			return nil, info, err
		}
	}
	return m, info, nil
}

// ClassifierFeatures extracts the penultimate-layer features of a trained
// classifier.
type ClassifierFeatures struct {
	Model *layers.Classifier
	tape  *autograd.Tape
}

// NewClassifierFeatures wraps a classifier as a feature extractor.
func NewClassifierFeatures(m *layers.Classifier) *ClassifierFeatures {
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	return &ClassifierFeatures{Model: m, tape: g}
}

// Dim is the feature dimension.
func (c *ClassifierFeatures) Dim() int { return c.Model.Config.Features }

// Name describes the network.
func (c *ClassifierFeatures) Name() string {
	cfg := c.Model.Config
	return fmt.Sprintf("classifier %d×%d×%d → %d-d penultimate layer", cfg.Channels, cfg.Height, cfg.Width, cfg.Features)
}

// Check reports images the network cannot take: it needs its training shape.
func (c *ClassifierFeatures) Check(ch, h, w int) error {
	cfg := c.Model.Config
	if ch != cfg.Channels || h != cfg.Height || w != cfg.Width {
		return fmt.Errorf("images are %d×%d×%d (C×H×W) but the classifier was trained on %d×%d×%d; use a classifier trained on such images, or --features inception:WEIGHTS",
			ch, h, w, cfg.Channels, cfg.Height, cfg.Width)
	}
	return nil
}

// Features maps n images (n·C·H·W values in [−1, 1]) to n×Dim features.
func (c *ClassifierFeatures) Features(x []float32, n, ch, h, w int) ([]float32, error) {
	if err := c.Check(ch, h, w); err != nil {
		return nil, err
	}
	if n < 1 || len(x) != n*ch*h*w {
		return nil, errors.New("classifier features: image buffer does not match the image shape")
	}
	c.tape.Reset()
	f, _ := c.Model.Forward(c.tape, c.tape.Const(tensor.FromSlice(x, n, ch, h, w)))
	return append([]float32(nil), f.T.Data()...), nil
}
