package rng

import (
	"math"
	"testing"
)

// Known-answer vectors of Random123 (tests/kat_vectors, github.com/DEShawResearch/random123), the
// three "philox4x32 10" lines: counter (4 words), key (2 words), expected block (4 words).
func TestPhilox4x32KnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := Philox4x32(c.ctr, c.key); got != c.want {
			t.Errorf("Philox4x32(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// The own log and sin/cos against the math library on a grid that includes the edges.
func TestBoxMullerTranscendentals(t *testing.T) {
	var worstLog, worstTrig float64
	for i := 0; i <= 200000; i++ {
		u := float64(i) / 200001
		x := 1 - u
		if d := math.Abs(logUnit(x) - math.Log(x)); d > worstLog {
			worstLog = d
		}
		s, c := sinCos2Pi(u)
		ws, wc := math.Sincos(2 * math.Pi * u)
		worstTrig = max(worstTrig, math.Abs(s-ws), math.Abs(c-wc))
	}
	if x := 0x1p-53; !(math.Abs(logUnit(x)-math.Log(x)) <= 1e-13) {
		t.Errorf("logUnit(2⁻⁵³) = %v, want %v", logUnit(x), math.Log(x))
	}
	if !(worstLog <= 2e-15) || !(worstTrig <= 2e-15) {
		t.Errorf("worst absolute error: log %.3g, sin/cos %.3g; want ≤ 2e-15", worstLog, worstTrig)
	}
}

// Normal draws have the moments of N(0, 1) and the right tail mass; uniforms stay in [0, 1).
func TestStreamDistributions(t *testing.T) {
	const n = 1 << 18
	z := make([]float32, n+1) // odd length: the last pair is cut
	Stream{Key: 7, Step: 3, ID: StreamNoise}.FillNormal(z)
	var m1, m2, m4 float64
	tail := 0
	for _, v := range z {
		x := float64(v)
		m1 += x
		m2 += x * x
		m4 += x * x * x * x
		if !(math.Abs(x) <= 2) {
			tail++
		}
	}
	m1, m2, m4 = m1/float64(len(z)), m2/float64(len(z)), m4/float64(len(z))
	se := 1 / math.Sqrt(float64(len(z)))
	p2 := math.Erfc(2 / math.Sqrt2) // P(|Z| > 2)
	if !(math.Abs(m1) <= 5*se) || !(math.Abs(m2-1) <= 5*math.Sqrt(2)*se) || !(math.Abs(m4-3) <= 5*math.Sqrt(96)*se) ||
		!(math.Abs(float64(tail)/float64(len(z))-p2) <= 5*math.Sqrt(p2*(1-p2))*se) {
		t.Errorf("normal moments: mean %.4g, E z² %.4g, E z⁴ %.4g, P(|z|>2) %.4g (want 0, 1, 3, %.4g)",
			m1, m2, m4, float64(tail)/float64(len(z)), p2)
	}
	u := make([]float32, 1001)
	Stream{Key: 7, Step: 3, ID: StreamTimes}.FillUniform(u)
	var mean float64
	for _, v := range u {
		if !(v >= 0 && v < 1) {
			t.Fatalf("uniform %v outside [0, 1)", v)
		}
		mean += float64(v) / float64(len(u))
	}
	if !(math.Abs(mean-0.5) <= 5*math.Sqrt(1.0/12/float64(len(u)))) {
		t.Errorf("uniform mean %.4f", mean)
	}
}

// Elements are addressed by counter: a prefix, another step and another stream differ; the
// element layout is the documented one.
func TestStreamAddressing(t *testing.T) {
	s := Stream{Key: 1 << 40, Step: 9, ID: StreamNoise}
	a, b := make([]float32, 10), make([]float32, 7)
	s.FillNormal(a)
	s.FillNormal(b)
	for i := range b {
		if a[i] != b[i] {
			t.Fatalf("element %d depends on the fill length: %v vs %v", i, a[i], b[i])
		}
	}
	w := s.Block(2)
	z0, z1 := BoxMuller(uniform53(w[0], w[1]), uniform53(w[2], w[3]))
	if a[4] != float32(z0) || a[5] != float32(z1) {
		t.Errorf("elements 4, 5 = %v, %v; want counter 2's pair %v, %v", a[4], a[5], float32(z0), float32(z1))
	}
	other := make([]float32, 10)
	for _, o := range []Stream{{s.Key, s.Step + 1, s.ID}, {s.Key, s.Step, StreamAux}, {s.Key + 1, s.Step, s.ID}} {
		o.FillNormal(other)
		if other[0] == a[0] && other[1] == a[1] {
			t.Errorf("stream %+v repeats stream %+v", o, s)
		}
	}
	if got, want := s.Float64(3), float64(uint64(s.Block(3)[0])<<21|uint64(s.Block(3)[1]>>11))/(1<<53); got != want {
		t.Errorf("Float64(3) = %v, want %v", got, want)
	}
}

// TestFillNormalFrom: every slice of a stream's normals, at even and odd
// offsets and of every length, is the same slice of one FillNormal.
func TestFillNormalFrom(t *testing.T) {
	s := Stream{Key: 0x1234_5678_9abc, Step: 7, ID: StreamNoise}
	full := make([]float32, 41)
	s.FillNormal(full)
	for first := 0; first <= len(full); first++ {
		for n := 0; first+n <= len(full); n++ {
			part := make([]float32, n)
			s.FillNormalFrom(part, uint64(first))
			for j, v := range part {
				if math.Float32bits(v) != math.Float32bits(full[first+j]) {
					t.Fatalf("FillNormalFrom(len %d, first %d)[%d] = %v, FillNormal gives %v", n, first, j, v, full[first+j])
				}
			}
		}
	}
}

// TestDropoutFrom: the mask of every slice of a tensor, at any offset, is the same slice of the
// whole tensor's mask.
func TestDropoutFrom(t *testing.T) {
	s := Stream{Key: 77, Step: 3, ID: DropoutStream(2)}
	x := make([]float32, 37)
	for i := range x {
		x[i] = float32(i + 1)
	}
	full := make([]float32, len(x))
	s.Dropout(full, x, 0.3)
	kept := 0
	for _, v := range full {
		if v != 0 {
			kept++
		}
	}
	if kept == 0 || kept == len(x) {
		t.Fatalf("p = 0.3 kept %d of %d", kept, len(x))
	}
	for first := 0; first <= len(x); first++ {
		for n := 0; first+n <= len(x); n++ {
			part := make([]float32, n)
			s.DropoutFrom(part, x[first:first+n], 0.3, uint64(first))
			for j, v := range part {
				if v != full[first+j] {
					t.Fatalf("DropoutFrom(len %d, first %d)[%d] = %v, Dropout gives %v", n, first, j, v, full[first+j])
				}
			}
		}
	}
}

// TestDropoutFromCounterCarry: past 2³² blocks the mask element e reads word e mod 4 of counter
// e/4 with the counter's high word set (the carry the CUDA kernel must make too), whatever the
// offset's lane.
func TestDropoutFromCounterCarry(t *testing.T) {
	s := Stream{Key: 0xdeadbeefcafef00d, Step: 11, ID: DropoutStream(5)}
	const p = 0.5
	x := make([]float32, 13)
	for i := range x {
		x[i] = float32(i) + 0.5
	}
	for _, first := range []uint64{1<<34 - 7, 1<<34 - 4, 1<<34 + 3, 1 << 40} {
		y := make([]float32, len(x))
		s.DropoutFrom(y, x, p, first)
		dropped := 0
		for j := range x {
			e := first + uint64(j)
			ctr := [4]uint32{uint32(e / 4), uint32(e / 4 >> 32), s.ID, s.Step}
			w := Philox4x32(ctr, [2]uint32{uint32(s.Key), uint32(s.Key >> 32)})
			want := float32(0)
			if float32(w[e%4]>>8)*0x1p-24 >= p {
				want = x[j] * 2
			} else {
				dropped++
			}
			if y[j] != want {
				t.Fatalf("DropoutFrom(first %d)[%d] = %v, counter %08x word %d gives %v", first, j, y[j], ctr, e%4, want)
			}
		}
		if dropped == 0 || dropped == len(x) {
			t.Errorf("first %d: p = %g dropped %d of %d", first, p, dropped, len(x))
		}
	}
}
