package cuda

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"holdgo/tensor"
)

// The tensor-core kernels' 128 tile takes 68 KiB of dynamic shared memory, which a kernel must opt
// in to: on a backend that accepts (the recorder, like a GPU) a large convolution plans the 128
// tile with that much shared memory and launches it; where the backend refuses, the plan falls back
// to the 64 tile (36 KiB, no opt-in) and the refusal is kept; a launch above 40 KiB that was never
// opted in to is refused by the device before it reaches the backend.
func TestConvPlanSharedOptIn(t *testing.T) {
	x, w, y := []int{128, 256, 16, 16}, []int{256, 256, 3, 3}, []int{128, 256, 16, 16}
	op := tensor.Op{Kind: tensor.OpConv2d, Stride: 1, Pad: 1}
	for _, c := range []struct {
		name   string
		dev    *Device
		bf16   bool
		tile   int
		shared int
	}{
		{"recorder tf32", func() *Device { d, _ := NewRecordingDevice(); return d }(), false, 128, 4 * 4 * 16 * 2 * (128 + 8)},
		{"recorder bf16", func() *Device { d, _ := NewRecordingDevice(); return d }(), true, 128, 4 * 4 * 16 * 2 * (128 + 4)},
		{"refusing backend tf32", NewDevice(newFake()), false, 64, 4 * 4 * 16 * 2 * (64 + 8)},
	} {
		c.dev.TF32Convs, c.dev.BF16 = true, c.bf16
		for pass := range 3 {
			p := c.dev.convPlan(c.dev.convShape(x, w, y, op), pass)
			if p.tile != c.tile || p.shared != c.shared {
				t.Errorf("%s, pass %d: tile %d with %d bytes of shared memory, want %d with %d", c.name, pass, p.tile, p.shared, c.tile, c.shared)
			}
		}
		if err := c.dev.OptInErr(); (c.tile == 64) != (err != nil) {
			t.Errorf("%s: OptInErr %v", c.name, err)
		} else if err != nil && !strings.Contains(err.Error(), "hg_conv_fwd_tf32_128") {
			t.Errorf("%s: OptInErr %v does not name the kernel", c.name, err)
		}
	}
	rec, _ := NewRecordingDevice()
	err := rec.launchShared("hg_conv_fwd_tf32_128", [3]int{1, 1, 1}, 69632, new(args))
	if err == nil || !strings.Contains(err.Error(), "without opting in") {
		t.Errorf("a 68 KiB launch without an opt-in: %v", err)
	}
}

// A measured tile table overrides the shape rule for the convolutions it has (and only at the
// tensor-core precisions), a forced ConvTile overrides the table, and the committed tables are
// taken only for their GPU and this build's kernels; a malformed tile is refused.
func TestConvTileTable(t *testing.T) {
	x, w, y := []int{2, 16, 8, 8}, []int{16, 16, 3, 3}, []int{2, 16, 8, 8}
	op := tensor.Op{Kind: tensor.OpConv2d, Stride: 1, Pad: 1}
	g := ConvGeom{N: 2, C: 16, H: 8, W: 8, O: 16, K: 3, S: 1, P: 1}
	d, _ := NewRecordingDevice()
	d.Tiles = map[string]int{ConvTileKey(g, convDgrad, "tf32"): 128, ConvTileKey(g, convFwd, "bf16"): 128}
	plan := func(pass int) int { return d.convPlan(d.convShape(x, w, y, op), pass).tile }
	if plan(convFwd) != 64 || plan(convDgrad) != 128 || plan(convWgrad) != 64 {
		t.Errorf("tf32 with the table: tiles %d %d %d, want 64 128 64", plan(convFwd), plan(convDgrad), plan(convWgrad))
	}
	d.BF16 = true
	if plan(convFwd) != 128 || plan(convDgrad) != 64 {
		t.Errorf("bf16 with the table: tiles %d %d, want 128 64", plan(convFwd), plan(convDgrad))
	}
	d.ConvTile = 64
	if plan(convFwd) != 64 {
		t.Error("a forced ConvTile did not override the table")
	}
	d.ConvTile, d.BF16, d.StrictFP32 = 0, false, true
	if plan(convDgrad) != 64 {
		t.Error("the table applied to strict FP32")
	}

	defer func(b []byte) { committedTiles = b }(committedTiles)
	committedTiles = []byte(`[{"gpu": "G1", "kernels": "old", "tiles": {"tf32 fwd 1,2,3,4,5,3,1,1": 128}},
		{"gpu": "G1", "kernels": "` + ConvKernelsHash() + `", "tiles": {"tf32 fwd 1,2,3,4,5,3,1,1": 64}}]`)
	if tiles, err := committedTileTable("G1"); err != nil || len(tiles) != 1 || tiles["tf32 fwd 1,2,3,4,5,3,1,1"] != 64 {
		t.Errorf("G1: %v, %v; want this build's table", tiles, err)
	}
	if tiles, err := committedTileTable("G2"); err != nil || tiles != nil {
		t.Errorf("G2: %v, %v; want none", tiles, err)
	}
	committedTiles = []byte(`[{"gpu": "G1", "kernels": "` + ConvKernelsHash() + `", "tiles": {"tf32 fwd 1,2,3,4,5,3,1,1": 96}}]`)
	if _, err := committedTileTable("G1"); err == nil || !strings.Contains(err.Error(), "tile 96") {
		t.Errorf("a tile of 96: %v", err)
	}
}

// The committed tables (convtiles.json) parse, each names its GPU and kernels, and every tile is
// 64 or 128. A table of other kernels than this build's is reported (it is ignored at run time).
func TestCommittedTiles(t *testing.T) {
	var tables []ConvTileTable
	if err := json.Unmarshal(committedTiles, &tables); err != nil {
		t.Fatalf("convtiles.json: %v", err)
	}
	for _, tb := range tables {
		if tb.GPU == "" || tb.Kernels == "" {
			t.Errorf("a table without its GPU or kernels: %+v", tb)
		}
		if err := checkTiles(tb.Tiles); err != nil {
			t.Errorf("%s: %v", tb.GPU, err)
		}
		if tb.Kernels != ConvKernelsHash() {
			t.Logf("%s: measured on kernels %s, this build has %s: ignored until re-measured", tb.GPU, tb.Kernels, ConvKernelsHash())
		}
	}
}

// fastDivisor's pair gives hg_fastdiv's quotient (⌊n·mul / 2³²⌋ >> shr, or n where mul = 0) equal to
// n / d for divisors 1 … 3000, powers of two and their neighbours, and large and random ones, at the
// numerators where it could fail: 0, d − 1, d, d + 1, multiples of d ± 1 near 2³¹, 2³¹ − 1, random.
func TestFastDivisor(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ds []int
	for d := 1; d <= 3000; d++ {
		ds = append(ds, d)
	}
	for l := 1; l < 31; l++ {
		ds = append(ds, 1<<l-1, 1<<l, 1<<l+1)
	}
	for range 2000 {
		ds = append(ds, 1+r.IntN(math.MaxInt32-1))
	}
	ds = append(ds, math.MaxInt32)
	for _, d := range ds {
		mul, shr := fastDivisor(d)
		top := math.MaxInt32 / d * d
		ns := []int{0, 1, d - 1, d, d + 1, top - 1, top, math.MaxInt32 - 1, math.MaxInt32}
		for range 20 {
			ns = append(ns, r.IntN(math.MaxInt32))
		}
		for _, n := range ns {
			if n < 0 || n > math.MaxInt32 {
				continue
			}
			q := uint32(n)
			if mul != 0 {
				q = uint32((uint64(uint32(n))*uint64(uint32(mul)))>>32) >> shr
			}
			if int(q) != n/d {
				t.Fatalf("%d / %d: %d, want %d (mul %#x, shr %d)", n, d, q, n/d, uint32(mul), shr)
			}
		}
	}
}
