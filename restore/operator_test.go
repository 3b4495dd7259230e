package restore

import (
	"math"
	"testing"

	"holdgo/internal/linref"
	"holdgo/rng"
)

// TestOperators checks every operator against a dense reference built without it: a mask's selection,
// pooling's block means, the blur as a direct 2-D convolution with zero padding of the 7-tap Gaussian;
// then Aᵀ = the transpose, A = U diag(s) V_rᵀ with V_r orthonormal, A A⁺ = I, A⁺ of a mask = Aᵀ, A⁺ of
// pooling = replication, and SolveGram against linref.
func TestOperators(t *testing.T) {
	blur, err := NewBlur(2, 9, 1)
	if err != nil {
		t.Fatal(err)
	}
	box, err := Task{Name: TaskInpaintBox, C: 1, H: 6, W: 5, Box: 3, BoxPos: BoxRandom}.Operator(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	drop, err := Task{Name: TaskInpaintRandom, C: 2, H: 4, W: 4, Drop: 0.5}.Operator(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	pool4, err := NewPool(2, 8, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []Operator{inpaint8(t), box, drop, pool2(t), pool4, blur, NewIdentity(7)} {
		d, m := op.Dim(), op.Rows()
		a := make([][]float64, m) // the reference matrix
		for i := range a {
			a[i] = make([]float64, d)
		}
		switch o := op.(type) {
		case *Mask:
			for j, k := range o.Known {
				a[j][k] = 1
			}
		case *Pool:
			h, w := o.H/o.F, o.W/o.F
			for c := range o.C {
				for r := range o.H {
					for col := range o.W {
						a[(c*h+r/o.F)*w+col/o.F][(c*o.H+r)*o.W+col] = 1 / float64(o.F*o.F)
					}
				}
			}
		case *Blur:
			var taps [BlurTaps]float64
			var sum float64
			for i := range taps {
				v := float64(i - 3)
				taps[i] = math.Exp(-v * v / 2)
				sum += taps[i]
			}
			n := o.H
			for c := range o.C {
				for r := range n {
					for col := range n {
						for dr := -3; dr <= 3; dr++ {
							for dc := -3; dc <= 3; dc++ {
								rr, cc := r+dr, col+dc
								if rr >= 0 && rr < n && cc >= 0 && cc < n {
									a[(c*n+r)*n+col][(c*n+rr)*n+cc] = taps[dr+3] * taps[dc+3] / (sum * sum)
								}
							}
						}
					}
				}
			}
		case *Identity:
			for i := range a {
				a[i][i] = 1
			}
		}
		r := rng.New(uint64(d))
		x, y := make([]float64, d), make([]float64, m)
		for i := range x {
			x[i] = r.Normal()
		}
		for i := range y {
			y[i] = r.Normal()
		}
		name := func() string { return typeName(op) }
		got := make([]float64, m)
		op.Apply(got, x)
		if e := maxAbsDiff(got, matVec(a, x)); !(e <= 1e-14) {
			t.Errorf("%s: A x off by %.3g", name(), e)
		}
		back := make([]float64, d)
		op.Adjoint(back, y)
		if e := maxAbsDiff(back, matTVec(a, y)); !(e <= 1e-14) {
			t.Errorf("%s: Aᵀ y off by %.3g", name(), e)
		}
		// A = U diag(s) V_rᵀ: check on x through the decomposition.
		v, w := make([]float64, m), make([]float64, m)
		op.ToRange(v, x)
		for j, s := range op.Singular() {
			v[j] *= s
		}
		uMul(op, w, v)
		if e := maxAbsDiff(w, matVec(a, x)); !(e <= 1e-12) {
			t.Errorf("%s: U diag(s) V_rᵀ x differs from A x by %.3g", name(), e)
		}
		// V_r orthonormal: V_rᵀ V_r v = v.
		op.FromRange(back, y)
		op.ToRange(v, back)
		if e := maxAbsDiff(v, y); !(e <= 1e-12) {
			t.Errorf("%s: V_rᵀV_r ≠ I (%.3g)", name(), e)
		}
		// A A⁺ y = y.
		Pinv(op, back, y)
		op.Apply(got, back)
		if e := maxAbsDiff(got, y); !(e <= 1e-9) {
			t.Errorf("%s: A A⁺ y differs from y by %.3g", name(), e)
		}
		// (a AAᵀ + b I)⁻¹ against linref.
		gram := make([][]float64, m)
		for i := range gram {
			gram[i] = make([]float64, m)
			for j := range m {
				for q := range d {
					gram[i][j] += 0.3 * a[i][q] * a[j][q]
				}
			}
			gram[i][i] += 0.01
		}
		SolveGram(op, got, y, 0.3, 0.01)
		if e := maxAbsDiff(got, linref.Solve(gram, y)); !(e <= 1e-9) {
			t.Errorf("%s: SolveGram off by %.3g", name(), e)
		}
	}
	// A⁺ of a mask is Aᵀ; of pooling, replication.
	y := []float64{1, 2, 3, 4}
	x := make([]float64, 16)
	Pinv(pool2(t), x, y)
	want := []float64{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}
	if e := maxAbsDiff(x, want); !(e <= 1e-15) {
		t.Errorf("pooling's A⁺ is not replication: %v", x)
	}
}

func typeName(op Operator) string {
	switch op.(type) {
	case *Mask:
		return "mask"
	case *Pool:
		return "pool"
	case *Blur:
		return "blur"
	}
	return "identity"
}

// TestTaskChecks: impossible tasks are refused with one line each.
func TestTaskChecks(t *testing.T) {
	for _, tk := range []Task{
		{Name: TaskInpaintBox, C: 1, H: 28, W: 28, Box: 29, BoxPos: BoxCenter},
		{Name: TaskInpaintBox, C: 1, H: 28, W: 28, Box: 14, BoxPos: "left"},
		{Name: TaskInpaintRandom, C: 1, H: 28, W: 28, Drop: 1},
		{Name: TaskInpaintRandom, C: 1, H: 28, W: 28, Drop: math.NaN()},
		{Name: TaskDeblur, C: 1, H: 28, W: 28, BlurSigma: 1},
		{Name: TaskDenoise, C: 1, H: 28, W: 28, Noise: -0.1},
		{Name: TaskDenoise, C: 1, H: 28, W: 28, Noise: math.NaN()},
		{Name: TaskSR4, C: 1, H: 30, W: 30},
		{Name: "colorize", C: 1, H: 28, W: 28},
	} {
		if err := tk.Check(); err == nil {
			t.Errorf("%+v: accepted", tk)
		}
	}
	ok := Task{Name: TaskInpaintBox, C: 1, H: 28, W: 28, Box: 14, BoxPos: BoxCenter}
	op, err := ok.Operator(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if op.Rows() != 28*28-14*14 {
		t.Errorf("the centred 14×14 box measures %d pixels, want %d", op.Rows(), 28*28-14*14)
	}
}

// TestMetrics: PSNR of a constant error e on [0, 1] is −20·log₁₀ e; SSIM(x, x) = 1; and SSIM of an affine
// image y = a x + b against a direct evaluation of the formula with the local statistics of x (for an
// affine y: μ_y = aμ_x + b, σ_y² = a²σ_x², σ_xy = aσ_x²), where the local statistics come from the
// separable window written out here.
func TestMetrics(t *testing.T) {
	x := make([]float64, 28*28)
	r := rng.New(1)
	for i := range x {
		x[i] = math.Tanh(r.Normal())
	}
	z := make([]float64, len(x))
	for i := range z {
		z[i] = x[i] + 0.2 // 0.1 on [0, 1]
	}
	if p := PSNR(z, x); !(math.Abs(p-20) <= 1e-9) {
		t.Errorf("PSNR of a 0.1 error = %.12g, want 20", p)
	}
	if s, err := SSIM(x, x, 1, 28, 28); err != nil || !(math.Abs(s-1) <= 1e-12) {
		t.Errorf("SSIM(x, x) = %v (%v), want 1", s, err)
	}
	const a, b = 0.6, 0.1 // on [0, 1]: y01 = a·x01 + b
	y := make([]float64, len(x))
	for i := range y {
		y[i] = 2*(a*0.5*(x[i]+1)+b) - 1
	}
	got, err := SSIM(y, x, 1, 28, 28)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, 11)
	var sum float64
	for i := range g {
		g[i] = math.Exp(-float64((i-5)*(i-5)) / (2 * 1.5 * 1.5))
		sum += g[i]
	}
	var want float64
	for r := 5; r < 23; r++ {
		for c := 5; c < 23; c++ {
			var m, m2 float64
			for i := range 11 {
				for j := range 11 {
					v := 0.5 * (x[(r+i-5)*28+c+j-5] + 1)
					wt := g[i] * g[j] / (sum * sum)
					m += wt * v
					m2 += wt * v * v
				}
			}
			vx := m2 - m*m
			my := a*m + b
			want += (2*m*my + 1e-4) * (2*a*vx + 9e-4) / ((m*m + my*my + 1e-4) * (vx + a*a*vx + 9e-4))
		}
	}
	want /= 18 * 18
	if !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("SSIM of an affine image = %.15g, want %.15g", got, want)
	}
	if _, err := SSIM(x[:16], x[:16], 1, 4, 4); err == nil {
		t.Error("SSIM accepted a 4×4 image")
	}
}
