package layers

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/tensor"
	"holdgo/torchfile"
)

// TestInceptionGolden runs the width-16 FID Inception of
// scripts/golden_inception.py, loaded through the Go .pth reader in both of
// torch.save's formats, on the script's images and compares the pool3
// features with PyTorch's: max |Δ| / max |feature| ≤ 1e-4.
func TestInceptionGolden(t *testing.T) {
	var meta struct {
		WidthDivisor int     `json:"width_divisor"`
		Shapes       [][]int `json:"shapes"`
	}
	b, err := os.ReadFile("../testdata/golden/inception.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	images, err := data.ReadNPY("../testdata/golden/inception_images.npy")
	if err != nil {
		t.Fatal(err)
	}
	want, err := data.ReadNPY("../testdata/golden/inception_features.npy")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"../testdata/golden/inception_w16.pth", "../testdata/golden/inception_w16_legacy.pth"}
	if testing.Short() {
		files = files[:1]
	}
	for _, path := range files {
		f, err := torchfile.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		net, err := LoadInception(f)
		if err != nil {
			t.Fatal(err)
		}
		if net.Divisor != meta.WidthDivisor || net.FeatureDim() != want.Cols() {
			t.Fatalf("%s: divisor %d, feature dimension %d; want %d, %d", path, net.Divisor, net.FeatureDim(), meta.WidthDivisor, want.Cols())
		}
		for i, shape := range meta.Shapes {
			n := shape[0] * shape[1] * shape[2]
			x := images.Float32()[i*images.Cols() : i*images.Cols()+n]
			got := net.Forward(tensor.FromSlice(x, 1, shape[0], shape[1], shape[2])).Data()
			ref := want.Data[i*want.Cols() : (i+1)*want.Cols()]
			var maxDiff, maxRef float64
			for j, v := range got {
				maxDiff = max(maxDiff, math.Abs(float64(v)-ref[j]))
				maxRef = max(maxRef, math.Abs(ref[j]))
			}
			if rel := maxDiff / maxRef; !(rel <= 1e-4) || math.IsNaN(rel) {
				t.Errorf("%s image %d %v: max |Δ| %.3g of max |feature| %.3g (rel. %.2g > 1e-4)", path, i, shape, maxDiff, maxRef, rel)
			} else {
				t.Logf("%s image %d %v: rel. error %.2g", path, i, shape, rel)
			}
		}
	}
}

// TestInceptionSafetensors loads the same weights from safetensors (the
// checkpoint package) and checks the layer parameters agree with the .pth.
func TestInceptionSafetensors(t *testing.T) {
	f, err := torchfile.Load("../testdata/golden/inception_w16.pth")
	if err != nil {
		t.Fatal(err)
	}
	var ts []checkpoint.Tensor
	for _, name := range f.Names() {
		ts = append(ts, checkpoint.Tensor{Name: name, Shape: f.Tensors[name].Shape, Data: f.Tensors[name].Data})
	}
	path := t.TempDir() + "/w.safetensors"
	if err := checkpoint.Save(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	cf, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := LoadInception(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadInception(cf)
	if err != nil {
		t.Fatal(err)
	}
	for name, u := range a.units {
		for i, v := range u.w.Data() {
			if b.units[name].w.Data()[i] != v {
				t.Fatalf("%s weight %d differs between .pth and safetensors", name, i)
			}
		}
	}
	delete(f.Tensors, "Mixed_7c.branch_pool.bn.running_var")
	if _, err := LoadInception(f); err == nil {
		t.Error("weights without Mixed_7c.branch_pool.bn.running_var loaded")
	}
}

// TestPoolResizeOps checks the layer-level ops against direct loops over
// their definitions (PyTorch's max_pool2d, avg_pool2d with
// count_include_pad=False, interpolate bilinear align_corners=False).
func TestPoolResizeOps(t *testing.T) {
	r := tensor.NewRNG(7)
	for _, sz := range [][2]int{{7, 9}, {8, 8}, {3, 4}, {1, 5}} {
		h, w := sz[0], sz[1]
		x := tensor.RandN(r, 2, 3, h, w)
		xd := x.Data()
		at := func(n, c, i, j int) float64 { return float64(xd[((n*3+c)*h+i)*w+j]) }
		check := func(name string, got *tensor.Tensor, oh, ow int, ref func(n, c, i, j int) float64) {
			t.Helper()
			if s := got.Shape(); s[2] != oh || s[3] != ow {
				t.Fatalf("%s %dx%d: shape %v, want %dx%d", name, h, w, s, oh, ow)
			}
			gd := got.Data()
			for n := range 2 {
				for c := range 3 {
					for i := range oh {
						for j := range ow {
							want := ref(n, c, i, j)
							if g := float64(gd[((n*3+c)*oh+i)*ow+j]); !(math.Abs(g-want) <= 1e-5*(1+math.Abs(want))) {
								t.Fatalf("%s %dx%d at %d,%d,%d,%d: %v, want %v", name, h, w, n, c, i, j, g, want)
							}
						}
					}
				}
			}
		}
		check("avgPool3", avgPool3(x), h, w, func(n, c, i, j int) float64 {
			var s float64
			k := 0
			for di := -1; di <= 1; di++ {
				for dj := -1; dj <= 1; dj++ {
					if y, z := i+di, j+dj; y >= 0 && y < h && z >= 0 && z < w {
						s += at(n, c, y, z)
						k++
					}
				}
			}
			return s / float64(k)
		})
		check("maxPool3 stride 1", maxPool3(x, 1), h, w, func(n, c, i, j int) float64 {
			m := math.Inf(-1)
			for di := -1; di <= 1; di++ {
				for dj := -1; dj <= 1; dj++ {
					if y, z := i+di, j+dj; y >= 0 && y < h && z >= 0 && z < w {
						m = max(m, at(n, c, y, z))
					}
				}
			}
			return m
		})
		if h >= 3 && w >= 3 {
			check("maxPool3 stride 2", maxPool3(x, 2), (h-3)/2+1, (w-3)/2+1, func(n, c, i, j int) float64 {
				m := math.Inf(-1)
				for di := range 3 {
					for dj := range 3 {
						m = max(m, at(n, c, 2*i+di, 2*j+dj))
					}
				}
				return m
			})
		}
		for _, out := range [][2]int{{11, 5}, {2, 13}} {
			src := func(i, in, outN int) (int, int, float64) {
				s := max((float64(i)+0.5)*float64(in)/float64(outN)-0.5, 0)
				i0 := int(math.Floor(s))
				i1 := i0 + 1
				if i1 > in-1 {
					i1 = in - 1
				}
				return i0, i1, s - float64(i0)
			}
			check("resize", resizeBilinear(x, out[0], out[1]), out[0], out[1], func(n, c, i, j int) float64 {
				y0, y1, ly := src(i, h, out[0])
				x0, x1, lx := src(j, w, out[1])
				return (1-ly)*((1-lx)*at(n, c, y0, x0)+lx*at(n, c, y0, x1)) + ly*((1-lx)*at(n, c, y1, x0)+lx*at(n, c, y1, x1))
			})
		}
	}
	// ReLU is exact.
	x := tensor.FromSlice([]float32{-2, -0, 0, 1e-30, 3.5, -1e-30}, 6)
	for i, v := range relu(x).Data() {
		if want := float32(math.Max(float64(x.Data()[i]), 0)); v != want {
			t.Errorf("relu(%v) = %v, want %v", x.Data()[i], v, want)
		}
	}
}
