//go:build ignore

// fit_gen prints the constants that asm_gen.go uses for SiLUGrad near the
// zero x0 ≈ -1.2785 of silu'(x) = σ(x)·g(x), g(x) = 1 + x·σ(-x). There g
// cancels, so in the window |x-x0| < w the kernels use g = h·Q(h), h = x-x0,
// with Q a near-minimax polynomial (least squares on Chebyshev nodes):
//
//	go run fit_gen.go [-w 0.375] [-deg 7]
package main

import (
	"flag"
	"fmt"
	"math"
)

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func g(x float64) float64 { return 1 + x*sigmoid(-x) }

func main() {
	w := flag.Float64("w", 0.375, "window half-width")
	deg := flag.Int("deg", 7, "degree of Q")
	flag.Parse()

	// Newton on g; g'(x) = σ(-x) - x·σ(-x)·σ(x).
	x0 := -1.28
	for range 50 {
		s := sigmoid(-x0)
		x0 -= g(x0) / (s - x0*s*(1-s))
	}
	hi := float64(float32(x0))
	lo := float64(float32(x0 - hi))
	fmt.Printf("x0 = %.17g (hi %v, lo %v), g(x0) = %.3g\n", x0, float32(hi), float32(lo), g(x0))

	// Least squares in u = h/w on 4·(deg+1) Chebyshev nodes, by modified
	// Gram–Schmidt QR of the Vandermonde matrix.
	m, n := 4*(*deg+1), *deg+1
	a := make([][]float64, n) // columns
	b := make([]float64, m)
	for j := range a {
		a[j] = make([]float64, m)
	}
	for i := range m {
		u := math.Cos(math.Pi * (float64(i) + 0.5) / float64(m))
		h := u * *w
		b[i] = g(x0+h) / h
		for j := range n {
			a[j][i] = math.Pow(u, float64(j))
		}
	}
	r := make([][]float64, n)
	for j := range n {
		r[j] = make([]float64, n)
		for k := range j {
			d := dot(a[k], a[j])
			r[k][j] = d
			for i := range m {
				a[j][i] -= d * a[k][i]
			}
		}
		r[j][j] = math.Sqrt(dot(a[j], a[j]))
		for i := range m {
			a[j][i] /= r[j][j]
		}
	}
	c := make([]float64, n)
	for j := n - 1; j >= 0; j-- {
		s := dot(a[j], b)
		for k := j + 1; k < n; k++ {
			s -= r[j][k] * c[k]
		}
		c[j] = s / r[j][j]
	}
	coef := make([]float32, n)
	for j := range n {
		coef[j] = float32(c[j] / math.Pow(*w, float64(j)))
	}
	// Error of the float32 coefficients, evaluated in float64, on a fine grid.
	worst := 0.0
	for i := -10000; i <= 10000; i++ {
		h := *w * float64(i) / 10000
		if h == 0 {
			continue
		}
		q := 0.0
		for j := n - 1; j >= 0; j-- {
			q = q*h + float64(coef[j])
		}
		worst = max(worst, math.Abs(q*h-g(x0+h))/math.Abs(g(x0+h)))
	}
	fmt.Printf("Q coefficients, h^0 first: %v\nmax relative error of h·Q(h) on the window: %.3g\n", coef, worst)
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}
