package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/layers"
	"holdgo/tensor"
)

// RunConfig is everything that defines a training run: data, SDE, model and
// optimisation. It is filled from flags or a YAML/JSON file, saved as
// DIR/config.yaml and inside every checkpoint, and rebuilds the SDE and the
// network when a checkpoint is sampled or resumed.
type RunConfig struct {
	Data       string  `yaml:"data" json:"data"`               // gmm1d, swissroll or a .npy file
	SwissNoise float64 `yaml:"swiss_noise" json:"swiss_noise"` // Swiss-roll noise

	SDE       string  `yaml:"sde" json:"sde"` // hold, cld, vp, ve
	Order     int     `yaml:"order" json:"order"`
	L         float64 `yaml:"L" json:"L"`
	Alpha     float64 `yaml:"alpha" json:"alpha"`
	Objective string  `yaml:"objective" json:"objective"` // bcsm (hsm for CLD) or dsm
	Times     string  `yaml:"times" json:"times"`         // training-time sampling: uniform or mixed

	Model  string `yaml:"model" json:"model"` // mlp, or ncsnpp-small, ncsnpp-cifar10, … for images
	Hidden int    `yaml:"hidden" json:"hidden"`
	Layers int    `yaml:"layers" json:"layers"`

	// Image data and NCSN++ (imagedata specs such as fashion-mnist:DIR).
	Flip      bool    `yaml:"flip,omitempty" json:"flip,omitempty"`             // random horizontal flips
	Dropout   float64 `yaml:"dropout,omitempty" json:"dropout,omitempty"`       // NCSN++ dropout
	NF        int     `yaml:"nf,omitempty" json:"nf,omitempty"`                 // NCSN++ base channels (0: the preset's)
	ResBlocks int     `yaml:"res_blocks,omitempty" json:"res_blocks,omitempty"` // NCSN++ res-blocks per level (0: the preset's)

	Steps     int     `yaml:"steps" json:"steps"`
	Batch     int     `yaml:"batch" json:"batch"`
	LR        float64 `yaml:"lr" json:"lr"`
	Warmup    int     `yaml:"warmup" json:"warmup"`
	GradClip  float64 `yaml:"grad_clip" json:"grad_clip"`
	EMA       float64 `yaml:"ema" json:"ema"`
	Seed      uint64  `yaml:"seed" json:"seed"`
	CkptEvery int     `yaml:"ckpt_every" json:"ckpt_every"`
}

// DefaultRunConfig is the paper's toy setting: HOLD-3 (L = 2, α = 0.02) on
// the multi Swiss roll, the 5-layer 128-unit MLP, Adam 1e-3, batch 512,
// EMA 0.999, gradient clipping 1 (as CLD-SGM's toy config).
func DefaultRunConfig() RunConfig {
	h := hold.DefaultConfig(hold.KindHOLD)
	return RunConfig{
		Data: data.NameSwissRoll, SwissNoise: data.DefaultSwissNoise,
		SDE: hold.KindHOLD, Order: h.Order, L: h.L, Alpha: h.Alpha, Objective: hold.ObjectiveBCSM, Times: TimesUniform,
		Model: "mlp", Hidden: 128, Layers: 5,
		Steps: 20000, Batch: 512, LR: 1e-3, GradClip: 1, EMA: 0.999, Seed: 0, CkptEvery: 1000,
	}
}

// ReadRunConfig reads a YAML (or JSON) file over base, rejecting unknown keys.
func ReadRunConfig(path string, base RunConfig) (RunConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&base); err != nil {
		return base, fmt.Errorf("config %s: %w", path, err)
	}
	return base, nil
}

// YAML renders the configuration as YAML.
func (c RunConfig) YAML() []byte {
	b, err := yaml.Marshal(c)
	if err != nil {
		panic(err) // a plain struct of scalars always marshals
	}
	return b
}

// Options returns the optimisation settings.
func (c RunConfig) Options() Options {
	return Options{Steps: c.Steps, Batch: c.Batch, LR: c.LR, Warmup: c.Warmup, GradClip: c.GradClip, EMA: c.EMA, Seed: c.Seed}
}

// SDEConfig returns the hold configuration of the run: the kind's defaults
// with the run's order, L, α and objective (where the kind has them).
func (c RunConfig) SDEConfig() (hold.Config, error) {
	kind := strings.ToLower(c.SDE)
	switch kind {
	case hold.KindHOLD, hold.KindCLD, hold.KindVP, hold.KindVE:
	default:
		return hold.Config{}, fmt.Errorf("unknown SDE %q (want hold, cld, vp or ve)", c.SDE)
	}
	h := hold.DefaultConfig(kind)
	if kind == hold.KindHOLD {
		h.Order, h.L, h.Alpha = c.Order, c.L, c.Alpha
	}
	switch obj := strings.ToLower(c.Objective); obj {
	case "", hold.ObjectiveBCSM, hold.ObjectiveHSM:
		if kind == hold.KindCLD {
			h.Objective = hold.ObjectiveHSM
		}
	case hold.ObjectiveDSM:
		h.Objective = hold.ObjectiveDSM
	default:
		return h, fmt.Errorf("unknown objective %q (want bcsm or dsm)", c.Objective)
	}
	return h, h.Validate()
}

// Built is what a configuration makes: the SDE, the data source and a
// freshly initialised network.
type Built struct {
	SDE    *hold.SDE
	Source data.Source
	Net    layers.ScoreNet
}

// Build validates the configuration and makes its SDE, data and network
// (initialised from the seed).
func (c RunConfig) Build() (*Built, error) {
	if err := c.Options().Validate(); err != nil {
		return nil, err
	}
	if c.CkptEvery < 0 {
		return nil, fmt.Errorf("ckpt-every must be ≥ 0, got %d", c.CkptEvery)
	}
	hc, err := c.SDEConfig()
	if err != nil {
		return nil, err
	}
	sde, err := hold.New(hc)
	if err != nil {
		return nil, err
	}
	if imagedata.IsSpec(c.Data) {
		return c.buildImages(sde)
	}
	src, err := data.Open(c.Data, c.SwissNoise)
	if err != nil {
		return nil, err
	}
	if c.Model != "mlp" {
		return nil, fmt.Errorf("unknown model %q for point data (want mlp)", c.Model)
	}
	d := src.Dimension()
	net, err := layers.NewMLP(layers.MLPConfig{In: sde.Blocks()*d + 1, Hidden: c.Hidden, Out: d, Layers: c.Layers},
		tensor.NewRNG(c.Seed^0x5eed))
	if err != nil {
		return nil, err
	}
	return &Built{SDE: sde, Source: src, Net: net}, nil
}

// buildImages makes the image data set and the NCSN++ network of an image
// run: the state is n·C channels, the output the last block's C channels.
func (c RunConfig) buildImages(sde *hold.SDE) (*Built, error) {
	src, err := imagedata.Open(c.Data, imagedata.Options{Flip: c.Flip})
	if err != nil {
		return nil, err
	}
	if src.H != src.W {
		return nil, fmt.Errorf("%s: NCSN++ needs square images, got %d×%d", c.Data, src.H, src.W)
	}
	nc, err := layers.NCSNppPreset(c.Model, sde.Blocks()*src.C, src.C, src.H)
	if err != nil {
		return nil, fmt.Errorf("image data %s: %w", c.Data, err)
	}
	nc.Dropout = c.Dropout
	if c.NF > 0 {
		nc.NF = c.NF
	}
	if c.ResBlocks > 0 {
		nc.NumResBlocks = c.ResBlocks
	}
	net, err := layers.NewNCSNpp(nc, tensor.NewRNG(c.Seed^0x5eed))
	if err != nil {
		return nil, err
	}
	return &Built{SDE: sde, Source: src, Net: net}, nil
}

// Metadata key of the run configuration inside checkpoints.
const keyRunConfig = checkpoint.KeyConfig

// Meta returns checkpoint metadata holding the configuration.
func (c RunConfig) Meta() map[string]string {
	m := map[string]string{}
	if err := checkpoint.SetJSON(m, keyRunConfig, c); err != nil {
		panic(err)
	}
	return m
}

// ConfigFromCheckpoint reads the run configuration stored in a checkpoint.
func ConfigFromCheckpoint(f *checkpoint.File) (RunConfig, error) {
	var c RunConfig
	raw, ok := f.Meta[keyRunConfig]
	if !ok {
		return c, fmt.Errorf("checkpoint %s has no run configuration (metadata %q): it was not written by holdctl train", f.Path, keyRunConfig)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("checkpoint %s: bad run configuration: %w", f.Path, err)
	}
	return c, nil
}
