package layers

import (
	"fmt"
	"slices"
	"strings"
)

// NCSNppConfig sizes an NCSN++ score network (docs/ncsnpp.md#the-network; score_sde's
// NCSNpp with resblock_type biggan, progressive none, attention ddpm,
// conditional, skip_rescale and init_scale 0).
type NCSNppConfig struct {
	Name             string  `json:"name" yaml:"name"`
	ImageSize        int     `json:"image_size" yaml:"image_size"`     // H = W
	InChannels       int     `json:"in_channels" yaml:"in_channels"`   // n·C: the state (q, p, s, …)
	OutChannels      int     `json:"out_channels" yaml:"out_channels"` // C: the last block's score
	NF               int     `json:"nf" yaml:"nf"`
	ChMult           []int   `json:"ch_mult" yaml:"ch_mult"`
	NumResBlocks     int     `json:"num_res_blocks" yaml:"num_res_blocks"`
	AttnResolutions  []int   `json:"attn_resolutions" yaml:"attn_resolutions"`
	Dropout          float64 `json:"dropout" yaml:"dropout"`
	Embedding        string  `json:"embedding" yaml:"embedding"` // EmbedFourier (input log t) or EmbedPositional (input t)
	FourierScale     float64 `json:"fourier_scale" yaml:"fourier_scale"`
	FIR              bool    `json:"fir" yaml:"fir"`                             // FIR [1,3,3,1] resampling, else nearest / 2×2 mean
	ProgressiveInput string  `json:"progressive_input" yaml:"progressive_input"` // ProgressiveResidual or ProgressiveNone
}

// ForwardBytes estimates the memory one image's forward pass without gradients holds at its peak,
// from the configuration alone (before anything is allocated), for sizing forward batches and refusing
// image shapes no budget can hold. Measured on the presets (a no-gradient tape's bytes per image per
// pixel and base channel): ncsnpp-small 312 (28²) and 346 (56²), ncsnpp-tiny 385, ncsnpp-cifar10
// 1,103; the estimate, 64·(res-blocks + 1)·levels bytes per pixel and base channel plus each
// attention block's r⁴ weights twice, is 1.2–1.9× those. Computed in float64: a shape from a hostile
// file cannot overflow it.
func (c NCSNppConfig) ForwardBytes() float64 {
	hw := float64(c.ImageSize) * float64(c.ImageSize)
	b := hw * float64(c.NF) * 64 * float64(c.NumResBlocks+1) * float64(max(1, len(c.ChMult)))
	for _, r := range c.AttnResolutions {
		a := float64(r) * float64(r)
		b += 2 * a * a * 4
	}
	return b
}

// TrainBytes estimates the memory of a training step on batch images: the forward pass's activations
// kept for the backward pass and the gradients flowing back, twice ForwardBytes per image (float64).
func (c NCSNppConfig) TrainBytes(batch int) float64 { return 2 * float64(batch) * c.ForwardBytes() }

// Embedding and progressive-input kinds.
const (
	EmbedFourier        = "fourier"
	EmbedPositional     = "positional"
	ProgressiveResidual = "residual"
	ProgressiveNone     = "none"
)

// NCSNppPresets names the configurations NCSNppPreset knows.
var NCSNppPresets = []string{"ncsnpp-cifar10", "ncsnpp-celebahq256", "ncsnpp-small", "ncsnpp-tiny"}

// NCSNppPreset returns a named configuration for inChannels → outChannels
// (outChannels 0: inChannels/3, HOLD-3's data block) at imageSize (0: the
// preset's own).
//
//	ncsnpp-cifar10      nf 128, ch_mult 1,2,2,2, 8 res-blocks, attention at 16, Fourier, FIR, residual input pyramid (CLD CIFAR-10; 32×32)
//	ncsnpp-celebahq256  nf 128, ch_mult 1,1,2,2,2,2,2, 4 res-blocks, attention at 16, positional, no FIR, no pyramid (HOLD paper; 256×256)
//	ncsnpp-small        nf 32, ch_mult 1,2,2, 1 res-block, attention at half resolution, Fourier, FIR, pyramid (CPU training; 28×28)
//	ncsnpp-tiny         nf 8, ch_mult 1,2, 1 res-block, attention at half resolution (tests; 8×8)
func NCSNppPreset(name string, inChannels, outChannels, imageSize int) (NCSNppConfig, error) {
	var c NCSNppConfig
	switch strings.ToLower(name) {
	case "ncsnpp-cifar10":
		c = NCSNppConfig{ImageSize: 32, NF: 128, ChMult: []int{1, 2, 2, 2}, NumResBlocks: 8, AttnResolutions: []int{16},
			Dropout: 0.1, Embedding: EmbedFourier, FourierScale: 16, FIR: true, ProgressiveInput: ProgressiveResidual}
	case "ncsnpp-celebahq256":
		c = NCSNppConfig{ImageSize: 256, NF: 128, ChMult: []int{1, 1, 2, 2, 2, 2, 2}, NumResBlocks: 4, AttnResolutions: []int{16},
			Dropout: 0.1, Embedding: EmbedPositional, FourierScale: 16, FIR: false, ProgressiveInput: ProgressiveNone}
	case "ncsnpp-small":
		c = NCSNppConfig{ImageSize: 28, NF: 32, ChMult: []int{1, 2, 2}, NumResBlocks: 1,
			Dropout: 0.1, Embedding: EmbedFourier, FourierScale: 16, FIR: true, ProgressiveInput: ProgressiveResidual}
	case "ncsnpp-tiny":
		c = NCSNppConfig{ImageSize: 8, NF: 8, ChMult: []int{1, 2}, NumResBlocks: 1,
			Dropout: 0, Embedding: EmbedFourier, FourierScale: 16, FIR: true, ProgressiveInput: ProgressiveResidual}
	default:
		return c, fmt.Errorf("unknown model %q (want one of %s)", name, strings.Join(NCSNppPresets, ", "))
	}
	c.Name = strings.ToLower(name)
	if imageSize > 0 {
		c.ImageSize = imageSize
	}
	if c.AttnResolutions == nil {
		c.AttnResolutions = []int{c.ImageSize / 2}
	}
	c.InChannels, c.OutChannels = inChannels, outChannels
	if outChannels == 0 {
		c.OutChannels = inChannels / 3
	}
	return c, c.Validate()
}

// Validate reports a configuration that cannot build a network.
func (c NCSNppConfig) Validate() error {
	switch {
	case c.InChannels < 1 || c.OutChannels < 1:
		return fmt.Errorf("ncsnpp: need in and out channels ≥ 1, got %d → %d", c.InChannels, c.OutChannels)
	case c.NF < 4 || c.NF%4 != 0:
		return fmt.Errorf("ncsnpp: nf must be a positive multiple of 4 (group norm), got %d", c.NF)
	case len(c.ChMult) == 0 || c.NumResBlocks < 1:
		return fmt.Errorf("ncsnpp: need at least one level and one res-block per level")
	case c.ImageSize < 1 || c.ImageSize%(1<<(len(c.ChMult)-1)) != 0:
		return fmt.Errorf("ncsnpp: image size %d is not divisible by 2^%d (%d levels)", c.ImageSize, len(c.ChMult)-1, len(c.ChMult))
	case c.Embedding != EmbedFourier && c.Embedding != EmbedPositional:
		return fmt.Errorf("ncsnpp: embedding %q (want fourier or positional)", c.Embedding)
	case c.ProgressiveInput != ProgressiveResidual && c.ProgressiveInput != ProgressiveNone:
		return fmt.Errorf("ncsnpp: progressive input %q (want residual or none)", c.ProgressiveInput)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("ncsnpp: dropout must be in [0, 1), got %g", c.Dropout)
	}
	for _, m := range c.ChMult {
		if m < 1 {
			return fmt.Errorf("ncsnpp: channel multipliers must be ≥ 1, got %v", c.ChMult)
		}
	}
	return nil
}

// resolution is the side of level l.
func (c NCSNppConfig) resolution(l int) int { return c.ImageSize >> l }

func (c NCSNppConfig) attnAt(res int) bool { return slices.Contains(c.AttnResolutions, res) }

// NCSNppParamCount returns the trainable-parameter count of c without
// allocating the weights (0 for an invalid configuration).
func NCSNppParamCount(c NCSNppConfig) int {
	m, b, err := layoutNCSNpp(c)
	if err != nil {
		return 0
	}
	n := 0
	for i, s := range b.specs {
		if i != m.fourier {
			n += numel(s.Shape)
		}
	}
	return n
}
