package train

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/internal/budget"
	"holdgo/internal/cliconf"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/rng"
)

// RunConfig is everything that defines a training run: data, SDE, model and
// optimisation. It is filled from flags or a YAML/JSON file, saved as
// DIR/config.yaml and inside every checkpoint, and rebuilds the SDE and the
// network when a checkpoint is sampled or resumed.
type RunConfig struct {
	// Each setting's flag, help text and bounds are its tags (internal/cliconf: Validate enforces the
	// bounds; holdctl train makes the flags, the YAML key being the flag with _ for -).
	Data       string  `yaml:"data" json:"data" flag:"data" help:"gmm1d, swissroll, a .npy file of points (n, d), or images: fashion-mnist:DIR, mnist:DIR, cifar10:DIR, images:PATH"`
	SwissNoise float64 `yaml:"swiss_noise" json:"swiss_noise" flag:"swiss-noise" min:"0" help:"noise of the Swiss rolls"`

	SDE       string  `yaml:"sde" json:"sde" flag:"sde" help:"hold, cld, vp or ve"`
	Order     int     `yaml:"order" json:"order" flag:"order" min:"1" max:"4" note:"HOLD: 2, 3 or 4; other SDEs ignore it" help:"HOLD order n (2, 3 or 4)"`
	L         float64 `yaml:"L" json:"L" flag:"L" gt:"0" help:"HOLD prior precision L"`
	Alpha     float64 `yaml:"alpha" json:"alpha" flag:"alpha" min:"0" help:"HOLD initial auxiliary variance factor α"`
	Objective string  `yaml:"objective" json:"objective" flag:"objective" help:"bcsm (hsm for CLD) or dsm"`
	// Times is the training-time sampling: uniform, mixed or sigma:DIST (times.go).
	Times string `yaml:"times" json:"times" flag:"times" help:"training-time sampling: uniform (the paper's), mixed (half log-uniform), or matched in the noise level σ of the sufficient statistic: sigma:edm (ln σ ~ N(-1.2, 1.2²)), sigma:vp (VP's uniform times), sigma:loguniform:A,B"`
	// Precond is the network's parameterisation: none (or empty: the SDE's native noise prediction)
	// or edm (EDM's preconditioning through the aligned gauge, precond.go).
	Precond string `yaml:"precond,omitempty" json:"precond,omitempty" flag:"precond" help:"network parameterisation: none (the SDE's noise prediction) or edm (EDM's preconditioning through the aligned gauge: input (c_in·c, w), x̂₀ = c_skip·c + c_out·F, EDM's loss weighting)"`
	// TimesLogMin is the lower end of the log-uniform half of mixed time sampling (0: t_min).
	TimesLogMin float64 `yaml:"times_log_min,omitempty" json:"times_log_min,omitempty" flag:"times-log-min" min:"0" note:"0: the SDE's t_min" help:"lower end of the log-uniform half of --times mixed (0: the SDE's t_min)"`

	Model  string `yaml:"model" json:"model" flag:"model" help:"score network: mlp (points) or ncsnpp-small, ncsnpp-cifar10, ncsnpp-celebahq256 (images)"`
	Hidden int    `yaml:"hidden" json:"hidden" flag:"hidden" min:"1" max:"65536" help:"MLP hidden width"` // MaxWidth
	Layers int    `yaml:"layers" json:"layers" flag:"layers" min:"1" max:"1024" help:"MLP Linear layers"` // MaxLayers
	// LogTime adds log t to the MLP's inputs (next to t).
	LogTime bool `yaml:"log_time,omitempty" json:"log_time,omitempty" flag:"log-time" help:"MLP: log t as an extra input next to t"`
	// Fourier is the number of random Fourier frequencies of the data block
	// the MLP also sees (sin and cos of each; 0: none), FourierScale their
	// standard deviation (0: DefaultFourierScale). See layers.MLPConfig.
	Fourier      int     `yaml:"fourier,omitempty" json:"fourier,omitempty" flag:"fourier" min:"0" max:"65536" note:"0: no Fourier features" help:"MLP: random Fourier features of the data block (sin and cos of N frequencies; 0: none)"`
	FourierScale float64 `yaml:"fourier_scale,omitempty" json:"fourier_scale,omitempty" flag:"fourier-scale" min:"0" max:"1e4" note:"0: 10; larger frequencies make sin(2π·B·x) float32 noise" help:"MLP: standard deviation of the Fourier frequencies (0: 10)"`
	// Estimate gives the MLP the kernel's flat-prior estimate of x₀ from
	// the state (hold.SDE.EstimateWeights) as an input, and the Fourier
	// features of it rather than of the position.
	Estimate bool `yaml:"estimate,omitempty" json:"estimate,omitempty" flag:"estimate" help:"MLP: the kernel's flat-prior estimate of x₀ from the state as an input, and --fourier features of it instead of the position's"`

	// Image data and NCSN++ (imagedata specs such as fashion-mnist:DIR).
	Flip      bool    `yaml:"flip,omitempty" json:"flip,omitempty" flag:"flip" help:"images: random horizontal flips"`
	Dropout   float64 `yaml:"dropout,omitempty" json:"dropout,omitempty" flag:"dropout" min:"0" lt:"1" help:"NCSN++ dropout (CIFAR-10 recipe: 0.1)"`
	NF        int     `yaml:"nf,omitempty" json:"nf,omitempty" flag:"nf" min:"0" max:"4096" note:"0: the preset's" help:"NCSN++ base channels (0: the preset's)"`                              // MaxChannels
	ResBlocks int     `yaml:"res_blocks,omitempty" json:"res_blocks,omitempty" flag:"res-blocks" min:"0" max:"64" note:"0: the preset's" help:"NCSN++ res-blocks per level (0: the preset's)"` // MaxResBlocks

	// Precision is the GPU arithmetic (PrecisionTF32 when empty; the CPU computes in FP32 either way).
	Precision string `yaml:"precision,omitempty" json:"precision,omitempty" flag:"precision" help:"GPU arithmetic: tf32 (TF32 tensor cores for the convolutions and GEMMs; the default), bf16 (BF16 tensor-core products with FP32 sums; tensors, weights and Adam stay FP32) or strict (FP32 everywhere, and with --dist nccl NCCL pinned to rings with the simple protocol: bit-identical runs on the same GPUs); the CPU computes in FP32 either way"`

	Steps     int     `yaml:"steps" json:"steps" flag:"steps" min:"0" help:"total optimisation steps"`
	Batch     int     `yaml:"batch" json:"batch" flag:"batch" min:"1" max:"1048576" help:"batch size"` // MaxBatch
	LR        float64 `yaml:"lr" json:"lr" flag:"lr" gt:"0" help:"Adam learning rate"`
	Warmup    int     `yaml:"warmup" json:"warmup" flag:"warmup" min:"0" help:"linear learning-rate warm-up steps"`
	LRDecay   string  `yaml:"lr_decay,omitempty" json:"lr_decay,omitempty" flag:"lr-decay" help:"learning-rate decay after warm-up: none, or cosine (to 0 at --steps; a resumed run with a new --steps follows the new schedule)"`
	GradClip  float64 `yaml:"grad_clip" json:"grad_clip" flag:"grad-clip" min:"0" note:"0 disables it" help:"global gradient-norm clip (0: off)"`
	EMA       float64 `yaml:"ema" json:"ema" flag:"ema" min:"0" lt:"1" help:"EMA rate of the weights"`
	Seed      uint64  `yaml:"seed" json:"seed" flag:"seed" help:"random seed (initialisation, data, noise)"`
	CkptEvery int     `yaml:"ckpt_every" json:"ckpt_every" flag:"ckpt-every" min:"0" note:"0: only at the end" help:"write the checkpoint every N steps (0: only at the end)"`

	// Ranks is the number of data-parallel processes that ran the run (its
	// last segment, if resumed); it does not change the result, since Batch
	// is the global batch. 0 in runs written before it was recorded.
	Ranks int `yaml:"ranks,omitempty" json:"ranks,omitempty"`

	// ImageShape (C, H, W) marks a shipped model (ExportEMA): its network is built for images of this
	// shape without reading the data set, so that it samples on a machine without the data. Such a
	// configuration cannot be trained or resumed.
	ImageShape []int `yaml:"image_shape,omitempty" json:"image_shape,omitempty"`

	// DataSHA256 is the SHA-256 of a .npy data file, recorded when training
	// copies it into the run directory (DataFile).
	DataSHA256 string `yaml:"data_sha256,omitempty" json:"data_sha256,omitempty"`

	dataFile string // where Build reads .npy points (StoreData, UseStoredData); "" means Data
}

// The GPU arithmetic of RunConfig.Precision.
const (
	PrecisionTF32   = "tf32"   // cuBLAS's TF32 tensor cores for the GEMMs (inputs rounded to 10 mantissa bits, FP32 sums)
	PrecisionStrict = "strict" // FP32 everywhere; NCCL pinned to one algorithm and protocol (cuda.PinNCCL)
	PrecisionBF16   = "bf16"   // BF16 tensor-core products (inputs rounded to 8 significant bits, FP32 sums); tensors, weights and Adam stay FP32
)

// Strict reports whether the run asks for strict FP32 arithmetic.
func (c RunConfig) Strict() bool { return c.Precision == PrecisionStrict }

// CheckPrecision accepts a GPU arithmetic of --precision: "" (tf32), tf32, strict or bf16.
func CheckPrecision(p string) error {
	switch p {
	case "", PrecisionTF32, PrecisionStrict, PrecisionBF16:
		return nil
	}
	return fmt.Errorf("precision must be %s, %s or %s, got %q", PrecisionTF32, PrecisionStrict, PrecisionBF16, p)
}

// DefaultFourierScale is the frequency scale of Fourier features when a run
// sets none: on the multi Swiss roll (coordinates within ±1, arms 0.063
// apart) 10 resolved the rolls and 30 did not (docs/demo.md).
const DefaultFourierScale = 10

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
	raw, err := budget.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("config: %w", err)
	}
	return ParseRunConfig(path, raw, base)
}

// ParseRunConfig decodes the YAML (or JSON) document raw, read from name,
// over base, rejecting unknown keys and an empty document. It does not
// validate the values (Validate does).
func ParseRunConfig(name string, raw []byte, base RunConfig) (RunConfig, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return base, fmt.Errorf("config %s is empty: want YAML or JSON keys such as \"steps: 1000\" (see holdctl train --help)", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&base); err != nil {
		if errors.Is(err, io.EOF) {
			return base, fmt.Errorf("config %s holds no keys (only comments or a document marker): want YAML or JSON keys such as \"steps: 1000\"", name)
		}
		return base, fmt.Errorf("config %s: %w", name, oneLine(err))
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return base, fmt.Errorf("config %s holds more than one YAML document: want one", name)
	}
	return base, nil
}

// oneLine joins the lines of yaml's multi-error messages.
func oneLine(err error) error {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	return errors.New(msg)
}

// Caps on the sizes of a run: far above any sensible run, low enough that
// nothing they size can overflow or ask for more memory than exists.
const (
	MaxWidth     = 1 << 16 // MLP hidden width
	MaxLayers    = 1 << 10 // MLP layers
	MaxBatch     = 1 << 20 // batch size
	MaxChannels  = 1 << 12 // NCSN++ base channels
	MaxResBlocks = 64      // NCSN++ res-blocks per level
	// MaxFourierScale caps the Fourier frequencies' standard deviation: at
	// 10⁴ the float32 argument of a feature is already rounded by ~10⁻³ rad.
	MaxFourierScale = 1e4
)

// Validate checks every key of the configuration — each number finite and
// in its range, whatever the SDE or data it applies to, and every name
// known — so that what a run stores can always be encoded again. Flags
// and config files both pass through it; errors name the key as its flag
// (config key: the flag with _ for -) and the bad value.
func (c RunConfig) Validate() error {
	if err := cliconf.Check(&c); err != nil { // every tagged setting's bounds
		return err
	}
	if err := CheckPrecision(c.Precision); err != nil {
		return err
	}
	if c.LRDecay != "" && c.LRDecay != optim.DecayNone && c.LRDecay != optim.DecayCosine {
		return fmt.Errorf("lr-decay must be %s or %s, got %q", optim.DecayNone, optim.DecayCosine, c.LRDecay)
	}
	switch c.SDE {
	case hold.KindHOLD, hold.KindCLD, hold.KindVP, hold.KindVE:
	default: // stored verbatim, a name in another case would be rejected only when the run is read back
		return fmt.Errorf("unknown SDE %q (want %s, %s, %s or %s, in lower case)", c.SDE, hold.KindHOLD, hold.KindCLD, hold.KindVP, hold.KindVE)
	}
	if c.Ranks < 0 || c.Ranks > MaxBatch {
		return fmt.Errorf("ranks must be in [0, %d] (0: not recorded), got %d", MaxBatch, c.Ranks)
	}
	switch {
	case c.Data == "":
		return errors.New("data must name a data set (gmm1d, swissroll, a .npy file or KIND:PATH)")
	case c.TimesLogMin > 0 && c.Times != TimesMixed:
		return fmt.Errorf("times-log-min %g applies to --times %s only, got --times %q", c.TimesLogMin, TimesMixed, c.Times)
	case c.LogTime && c.Model != "mlp":
		return fmt.Errorf("log-time applies to the mlp model only, got --model %s", c.Model)
	case c.Estimate && c.Model != "mlp":
		return fmt.Errorf("estimate applies to the mlp model only, got --model %s", c.Model)
	case c.Fourier > 0 && c.Model != "mlp":
		return fmt.Errorf("fourier applies to the mlp model only, got --model %s", c.Model)
	}
	if _, err := parseTimes(c.Times); err != nil {
		return err
	}
	if c.DataSHA256 != "" {
		if b, err := hex.DecodeString(c.DataSHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("data_sha256 must be 64 hexadecimal digits, got %q", c.DataSHA256)
		}
	}
	hc, err := c.SDEConfig()
	if err != nil {
		return err
	}
	if err := checkPrecond(c.Precond, hc.Objective, hc.Order); err != nil {
		return err
	}
	if strings.HasPrefix(c.Times, TimesSigma) { // the σ distribution must reach the SDE's noise levels
		sde, err := hold.New(hc)
		if err != nil {
			return err
		}
		if _, err := newTimeSampler(sde, c.TimeSampling()); err != nil {
			return err
		}
	}
	return nil
}

// YAML renders the configuration as YAML.
func (c RunConfig) YAML() ([]byte, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode run configuration: %w", err)
	}
	return b, nil
}

// TimeSampling returns how the run's loss draws training times.
func (c RunConfig) TimeSampling() TimeSampling {
	return TimeSampling{Scheme: c.Times, LogMin: c.TimesLogMin}
}

// Options returns the optimisation settings.
func (c RunConfig) Options() Options {
	return Options{Steps: c.Steps, Batch: c.Batch, LR: c.LR, Warmup: c.Warmup, Decay: c.LRDecay, GradClip: c.GradClip, EMA: c.EMA, Seed: c.Seed}
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
	if err := c.Validate(); err != nil {
		return nil, err
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
	var src data.Source
	if c.PointFile() {
		src, err = c.openPoints()
	} else {
		src, err = data.Open(c.Data, c.SwissNoise)
	}
	if err != nil {
		return nil, err
	}
	if c.Model != "mlp" {
		return nil, fmt.Errorf("unknown model %q for point data (want mlp)", c.Model)
	}
	d := src.Dimension()
	net, err := layers.NewMLP(layers.MLPConfig{In: sde.Blocks()*d + 1, Hidden: c.Hidden, Out: d, Layers: c.Layers, LogTime: c.LogTime,
		Fourier: c.Fourier, FourierInputs: d, FourierScale: cmp.Or(c.FourierScale, DefaultFourierScale), Estimate: c.Estimate},
		rng.New(c.Seed^0x5eed))
	if err != nil {
		return nil, err
	}
	if c.Estimate {
		net.Estimator = KernelEstimator(sde, d)
	}
	return &Built{SDE: sde, Source: src, Net: net}, nil
}

// NewTrainer builds the run (Build) and returns the trainer of rank
// comm.Rank() of comm (dist.Single{} for one process) at step 0: the loss of
// its shard of the global batch (ShardScoreLoss), the communicator set. Then
// Restore (to resume), Broadcast, SetDevice.
func (c RunConfig) NewTrainer(comm dist.Communicator) (*Trainer, error) {
	first, n, err := dist.Split(c.Batch, comm.Rank(), comm.Size())
	if err != nil {
		return nil, err
	}
	if len(c.ImageShape) > 0 {
		return nil, fmt.Errorf("the configuration is a shipped model's (image_shape %v: EMA weights only, no data set): it cannot be trained or resumed; train a new run from the data", c.ImageShape)
	}
	built, err := c.Build()
	if err != nil {
		return nil, err
	}
	shardLoss := ShardScoreLoss
	if c.Precond == PrecondEDM {
		shardLoss = ShardEDMLoss
	}
	loss, err := shardLoss(built.SDE, built.Net, built.Source.Sample, Shard{Global: c.Batch, First: first, Len: n},
		built.Source.Dimension(), c.TimeSampling())
	if err != nil {
		return nil, err
	}
	tr, err := New(c.Options(), built.Net.Parameters(), loss)
	if err != nil {
		return nil, err
	}
	tr.SetComm(comm)
	if m, ok := built.Net.(*layers.NCSNpp); ok {
		tr.StepBytes = m.Config.TrainBytes(n)
	}
	return tr, nil
}

// buildImages makes the image data set and the NCSN++ network of an image
// run: the state is n·C channels, the output the last block's C channels.
func (c RunConfig) buildImages(sde *hold.SDE) (*Built, error) {
	var (
		src *imagedata.Dataset
		err error
	)
	if len(c.ImageShape) > 0 {
		if len(c.ImageShape) != 3 {
			return nil, fmt.Errorf("image_shape %v: want C, H, W", c.ImageShape)
		}
		src, err = imagedata.Shape(c.Data, c.ImageShape[0], c.ImageShape[1], c.ImageShape[2])
	} else {
		src, err = imagedata.Open(c.Data, imagedata.Options{Flip: c.Flip})
	}
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
	// One image's forward pass must fit the memory budget, or the first sample or training step would
	// end in the out-of-memory killer (an image shape edited in a file, a huge --data).
	if err := budget.Check(int64(min(nc.ForwardBytes(), 1<<62)), fmt.Sprintf("one %d×%d×%d image's forward pass through %s (estimated)", src.C, src.H, src.W, c.Model)); err != nil {
		return nil, err
	}
	net, err := layers.NewNCSNpp(nc, rng.New(c.Seed^0x5eed))
	if err != nil {
		return nil, err
	}
	return &Built{SDE: sde, Source: src, Net: net}, nil
}

// Metadata key of the run configuration inside checkpoints.
const keyRunConfig = checkpoint.KeyConfig

// Meta returns checkpoint metadata holding the configuration. It fails,
// rather than panics, on a configuration JSON cannot hold (a NaN that
// escaped Validate).
func (c RunConfig) Meta() (map[string]string, error) {
	m := map[string]string{}
	if err := checkpoint.SetJSON(m, keyRunConfig, c); err != nil {
		return nil, fmt.Errorf("encode run configuration: %w", err)
	}
	return m, nil
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

// Differences lists the keys in which o differs from c, as "key: stored
// value, given value", leaving out the keys named in allowed (YAML names).
func (c RunConfig) Differences(o RunConfig, allowed ...string) []string {
	var out []string
	a, b := reflect.ValueOf(c), reflect.ValueOf(o)
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || slices.Contains(allowed, key) {
			continue
		}
		x, y := a.Field(i).Interface(), b.Field(i).Interface()
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s: stored %v, given %v", key, x, y))
		}
	}
	return out
}
