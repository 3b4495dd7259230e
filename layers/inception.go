package layers

import (
	"fmt"
	"math"

	"holdgo/tensor"
)

// Inception-v3 as pytorch-fid uses it for FID (pytorch_fid/inception.py,
// InceptionV3 with resize_input and normalize_input, output block 3): the
// torchvision Inception3 trunk with the FID blocks of the TensorFlow 2015
// graph —
//
//	FIDInceptionA (Mixed_5b–5d), FIDInceptionC (6b–6e), FIDInceptionE_1 (7b):
//	    the pool branch averages 3×3 windows without counting the padding;
//	FIDInceptionE_2 (7c): the pool branch max-pools 3×3 windows (stride 1, pad 1);
//
// every convolution followed by BatchNorm (eps 1e-3, folded into the
// convolution's weight and bias at load time) and ReLU; the input resized
// bilinearly to 299×299 (align_corners=False) and scaled from [0, 1] to
// [−1, 1]; the output is the 2048-d global average (pool3). It is inference
// only and uses tensor ops alone (inception_ops.go), so a device that runs
// the op list runs it.
//
// Channel counts can be divided by a width divisor (1, 2, 4, 8 or 16; the
// loader reads it from the weights): scripts/golden_inception.py checks the
// network against PyTorch with a divisor of 16, whose random weights fit a
// 0.5 MB file, where a full-width file is 95 MB.

// InceptionSize is the side of the square images the network sees.
const InceptionSize = 299

// inceptionBNEps is the batch-norm epsilon of the FID Inception weights.
const inceptionBNEps = 1e-3

// WeightSource is a file of named float32 tensors: torchfile.File (.pth) and
// checkpoint.File (safetensors) both are.
type WeightSource interface {
	Float32(name string, shape ...int) ([]float32, error)
}

// convUnit is BasicConv2d: convolution (no bias), BatchNorm, ReLU, with the
// batch norm folded into weight and bias.
type convUnit struct {
	w, b           *tensor.Tensor
	stride, ph, pw int
}

func (u *convUnit) forward(x *tensor.Tensor) *tensor.Tensor {
	pad := u.ph
	if u.ph != u.pw { // asymmetric kernels (1×7, 7×1, …): pad explicitly
		x = padAxis(padAxis(x, 2, u.ph, u.ph, 0), 3, u.pw, u.pw, 0)
		pad = 0
	}
	return relu(tensor.Conv2d(nil, x, u.w, u.b, u.stride, pad))
}

// Inception is the loaded network.
type Inception struct {
	Divisor int // channel counts are those of Inception-v3 divided by this
	units   map[string]*convUnit
}

// FeatureDim is the length of the pool3 feature vector (2048/Divisor).
func (m *Inception) FeatureDim() int { return 2048 / m.Divisor }

// inceptionLoader reads BasicConv2d units from a weight source.
type inceptionLoader struct {
	src     WeightSource
	divisor int
	units   map[string]*convUnit
	err     error
}

// unit loads NAME.conv.weight and NAME.bn.{weight,bias,running_mean,running_var}
// for a convolution from cin to cout channels (full-width counts, divided
// here unless they are the 3 input channels).
func (l *inceptionLoader) unit(name string, cin, cout, kh, kw, stride, ph, pw int) {
	if l.err != nil {
		return
	}
	if cin != 3 {
		cin /= l.divisor
	}
	cout /= l.divisor
	w, err := l.src.Float32(name+".conv.weight", cout, cin, kh, kw)
	if err != nil {
		l.err = err
		return
	}
	var bn [4][]float32
	for i, p := range []string{"weight", "bias", "running_mean", "running_var"} {
		if bn[i], err = l.src.Float32(name+".bn."+p, cout); err != nil {
			l.err = err
			return
		}
	}
	per := cin * kh * kw
	fw, fb := make([]float32, len(w)), make([]float32, cout)
	for o := range cout {
		v := float64(bn[3][o])
		if v < 0 || math.IsNaN(v) {
			l.err = fmt.Errorf("inception: %s.bn.running_var[%d] = %v (want ≥ 0)", name, o, v)
			return
		}
		scale := float64(bn[0][o]) / math.Sqrt(v+inceptionBNEps)
		for k := range per {
			fw[o*per+k] = float32(float64(w[o*per+k]) * scale)
		}
		fb[o] = float32(float64(bn[1][o]) - float64(bn[2][o])*scale)
	}
	l.units[name] = &convUnit{w: tensor.FromSlice(fw, cout, cin, kh, kw), b: tensor.FromSlice(fb, cout), stride: stride, ph: ph, pw: pw}
}

// LoadInception builds the network from pytorch-fid's state dict
// (pt_inception-2015-12-05-6726825d.pth through torchfile, or the same names
// in safetensors). The width divisor is read from Conv2d_1a_3x3 (32 output
// channels at full width); the fc layer and any other extra tensor are
// ignored.
func LoadInception(src WeightSource) (*Inception, error) {
	w0, err := src.Float32("Conv2d_1a_3x3.conv.weight")
	if err != nil {
		return nil, fmt.Errorf("inception: %w (is this pytorch-fid's pt_inception-2015-12-05-6726825d.pth?)", err)
	}
	out := len(w0) / (3 * 3 * 3)
	divisor := 0
	for _, d := range []int{1, 2, 4, 8, 16} {
		if out*d == 32 && len(w0) == out*27 {
			divisor = d
		}
	}
	if divisor == 0 {
		return nil, fmt.Errorf("inception: Conv2d_1a_3x3.conv.weight has %d values: want 32×3×3×3 (or a width divided by 2, 4, 8 or 16)", len(w0))
	}
	l := &inceptionLoader{src: src, divisor: divisor, units: map[string]*convUnit{}}
	l.unit("Conv2d_1a_3x3", 3, 32, 3, 3, 2, 0, 0)
	l.unit("Conv2d_2a_3x3", 32, 32, 3, 3, 1, 0, 0)
	l.unit("Conv2d_2b_3x3", 32, 64, 3, 3, 1, 1, 1)
	l.unit("Conv2d_3b_1x1", 64, 80, 1, 1, 1, 0, 0)
	l.unit("Conv2d_4a_3x3", 80, 192, 3, 3, 1, 0, 0)
	for _, a := range []struct {
		name     string
		cin, gap int
	}{{"Mixed_5b", 192, 32}, {"Mixed_5c", 256, 64}, {"Mixed_5d", 288, 64}} {
		n, c := a.name, a.cin
		l.unit(n+".branch1x1", c, 64, 1, 1, 1, 0, 0)
		l.unit(n+".branch5x5_1", c, 48, 1, 1, 1, 0, 0)
		l.unit(n+".branch5x5_2", 48, 64, 5, 5, 1, 2, 2)
		l.unit(n+".branch3x3dbl_1", c, 64, 1, 1, 1, 0, 0)
		l.unit(n+".branch3x3dbl_2", 64, 96, 3, 3, 1, 1, 1)
		l.unit(n+".branch3x3dbl_3", 96, 96, 3, 3, 1, 1, 1)
		l.unit(n+".branch_pool", c, a.gap, 1, 1, 1, 0, 0)
	}
	l.unit("Mixed_6a.branch3x3", 288, 384, 3, 3, 2, 0, 0)
	l.unit("Mixed_6a.branch3x3dbl_1", 288, 64, 1, 1, 1, 0, 0)
	l.unit("Mixed_6a.branch3x3dbl_2", 64, 96, 3, 3, 1, 1, 1)
	l.unit("Mixed_6a.branch3x3dbl_3", 96, 96, 3, 3, 2, 0, 0)
	for _, cb := range []struct {
		name string
		c7   int
	}{{"Mixed_6b", 128}, {"Mixed_6c", 160}, {"Mixed_6d", 160}, {"Mixed_6e", 192}} {
		n, c7 := cb.name, cb.c7
		l.unit(n+".branch1x1", 768, 192, 1, 1, 1, 0, 0)
		l.unit(n+".branch7x7_1", 768, c7, 1, 1, 1, 0, 0)
		l.unit(n+".branch7x7_2", c7, c7, 1, 7, 1, 0, 3)
		l.unit(n+".branch7x7_3", c7, 192, 7, 1, 1, 3, 0)
		l.unit(n+".branch7x7dbl_1", 768, c7, 1, 1, 1, 0, 0)
		l.unit(n+".branch7x7dbl_2", c7, c7, 7, 1, 1, 3, 0)
		l.unit(n+".branch7x7dbl_3", c7, c7, 1, 7, 1, 0, 3)
		l.unit(n+".branch7x7dbl_4", c7, c7, 7, 1, 1, 3, 0)
		l.unit(n+".branch7x7dbl_5", c7, 192, 1, 7, 1, 0, 3)
		l.unit(n+".branch_pool", 768, 192, 1, 1, 1, 0, 0)
	}
	l.unit("Mixed_7a.branch3x3_1", 768, 192, 1, 1, 1, 0, 0)
	l.unit("Mixed_7a.branch3x3_2", 192, 320, 3, 3, 2, 0, 0)
	l.unit("Mixed_7a.branch7x7x3_1", 768, 192, 1, 1, 1, 0, 0)
	l.unit("Mixed_7a.branch7x7x3_2", 192, 192, 1, 7, 1, 0, 3)
	l.unit("Mixed_7a.branch7x7x3_3", 192, 192, 7, 1, 1, 3, 0)
	l.unit("Mixed_7a.branch7x7x3_4", 192, 192, 3, 3, 2, 0, 0)
	for _, e := range []struct {
		name string
		cin  int
	}{{"Mixed_7b", 1280}, {"Mixed_7c", 2048}} {
		n, c := e.name, e.cin
		l.unit(n+".branch1x1", c, 320, 1, 1, 1, 0, 0)
		l.unit(n+".branch3x3_1", c, 384, 1, 1, 1, 0, 0)
		l.unit(n+".branch3x3_2a", 384, 384, 1, 3, 1, 0, 1)
		l.unit(n+".branch3x3_2b", 384, 384, 3, 1, 1, 1, 0)
		l.unit(n+".branch3x3dbl_1", c, 448, 1, 1, 1, 0, 0)
		l.unit(n+".branch3x3dbl_2", 448, 384, 3, 3, 1, 1, 1)
		l.unit(n+".branch3x3dbl_3a", 384, 384, 1, 3, 1, 0, 1)
		l.unit(n+".branch3x3dbl_3b", 384, 384, 3, 1, 1, 1, 0)
		l.unit(n+".branch_pool", c, 192, 1, 1, 1, 0, 0)
	}
	if l.err != nil {
		return nil, fmt.Errorf("inception: %w", l.err)
	}
	return &Inception{Divisor: divisor, units: l.units}, nil
}

// run applies the named units in sequence.
func (m *Inception) run(x *tensor.Tensor, names ...string) *tensor.Tensor {
	for _, n := range names {
		x = m.units[n].forward(x)
	}
	return x
}

// Forward maps images x (N, 3, H, W) with values in [0, 1] to the pool3
// features (N, FeatureDim).
func (m *Inception) Forward(x *tensor.Tensor) *tensor.Tensor {
	x = resizeBilinear(x, InceptionSize, InceptionSize)
	x = tensor.AddScalar(x, tensor.MulScalar(x, x, 2), -1)
	x = m.run(x, "Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3")
	x = maxPool3(x, 2)
	x = m.run(x, "Conv2d_3b_1x1", "Conv2d_4a_3x3")
	x = maxPool3(x, 2)
	for _, n := range []string{"Mixed_5b", "Mixed_5c", "Mixed_5d"} { // FIDInceptionA
		x = tensor.Concat(nil, 1,
			m.run(x, n+".branch1x1"),
			m.run(x, n+".branch5x5_1", n+".branch5x5_2"),
			m.run(x, n+".branch3x3dbl_1", n+".branch3x3dbl_2", n+".branch3x3dbl_3"),
			m.run(avgPool3(x), n+".branch_pool"))
	}
	x = tensor.Concat(nil, 1, // InceptionB
		m.run(x, "Mixed_6a.branch3x3"),
		m.run(x, "Mixed_6a.branch3x3dbl_1", "Mixed_6a.branch3x3dbl_2", "Mixed_6a.branch3x3dbl_3"),
		maxPool3(x, 2))
	for _, n := range []string{"Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"} { // FIDInceptionC
		x = tensor.Concat(nil, 1,
			m.run(x, n+".branch1x1"),
			m.run(x, n+".branch7x7_1", n+".branch7x7_2", n+".branch7x7_3"),
			m.run(x, n+".branch7x7dbl_1", n+".branch7x7dbl_2", n+".branch7x7dbl_3", n+".branch7x7dbl_4", n+".branch7x7dbl_5"),
			m.run(avgPool3(x), n+".branch_pool"))
	}
	x = tensor.Concat(nil, 1, // InceptionD
		m.run(x, "Mixed_7a.branch3x3_1", "Mixed_7a.branch3x3_2"),
		m.run(x, "Mixed_7a.branch7x7x3_1", "Mixed_7a.branch7x7x3_2", "Mixed_7a.branch7x7x3_3", "Mixed_7a.branch7x7x3_4"),
		maxPool3(x, 2))
	for _, n := range []string{"Mixed_7b", "Mixed_7c"} { // FIDInceptionE_1, E_2
		b3 := m.run(x, n+".branch3x3_1")
		bd := m.run(x, n+".branch3x3dbl_1", n+".branch3x3dbl_2")
		var pool *tensor.Tensor
		if n == "Mixed_7c" {
			pool = maxPool3(x, 1)
		} else {
			pool = avgPool3(x)
		}
		x = tensor.Concat(nil, 1,
			m.run(x, n+".branch1x1"),
			m.run(b3, n+".branch3x3_2a"), m.run(b3, n+".branch3x3_2b"),
			m.run(bd, n+".branch3x3dbl_3a"), m.run(bd, n+".branch3x3dbl_3b"),
			m.run(pool, n+".branch_pool"))
	}
	return tensor.Mean(nil, x, 2, 3).Reshape(x.Dim(0), x.Dim(1))
}
