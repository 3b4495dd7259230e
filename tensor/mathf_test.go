package tensor

import (
	"math"
	"testing"
)

// TestExpfAccuracy compares expf with float64 exp over the float32 range,
// in ulps of the float32 result.
func TestExpfAccuracy(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(x float32) {
		got := float64(expf(x))
		want := math.Exp(float64(x))
		if math.IsInf(want, 1) || want > math.MaxFloat32 {
			if !math.IsInf(got, 1) {
				t.Fatalf("expf(%v) = %v, want +Inf", x, got)
			}
			return
		}
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		if e := math.Abs(got-want) / ulp; e > worst {
			worst, at = e, x
		}
	}
	for x := float32(-100); x < 89; x += 0.001373 {
		check(x)
	}
	for _, x := range []float32{0, -0, 1e-30, -1e-30, 88.72, 88.7228, 88.73, -87, -87.5, -103, -110} {
		check(x)
	}
	if worst > 3 {
		t.Fatalf("expf error %.2f ulp at %v", worst, at)
	}
	if v := expf(float32(math.NaN())); v == v {
		t.Fatalf("expf(NaN) = %v", v)
	}
}

func BenchmarkExpf(b *testing.B) {
	xs := RandN(NewRNG(1), 4096).Data()
	var s float32
	for range b.N {
		for _, x := range xs {
			s += expf(x)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/elem")
	_ = s
}

func BenchmarkMathExp(b *testing.B) {
	xs := RandN(NewRNG(1), 4096).Data()
	var s float32
	for range b.N {
		for _, x := range xs {
			s += float32(math.Exp(float64(x)))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/elem")
	_ = s
}
