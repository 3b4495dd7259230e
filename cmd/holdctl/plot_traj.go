package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// The paper's Figures 8–9 for a trained image model: every channel of the state (q, p, s; four for
// HOLD-4) of a few samples at about ten times along the sampling path, and the same along the forward
// (noising) path from test images.

func plotTrajectoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "trajectory",
		Usage: "Figures 8–9: every channel of the state of --n image samples along the sampling path and along the forward path from test images",
		Description: "Two blocks of rows in one PNG: the reverse (sampling) path on top, the forward path from the first --n\n" +
			"images of --data below; per sample one row per channel of the state (q, then p, s, …), and one column per\n" +
			"time, --times of them from T (left) to the end of the grid (right), evenly spaced in the log of the noise\n" +
			"level σ of the state's sufficient statistic. Each tile shows value / (2.5·std), std the channel's marginal\n" +
			"standard deviation at that time (data variance taken as 1/3), so every channel uses the grey range.\n" +
			"The times are printed.",
		Flags: append(samplerFlags(),
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained image run or shipped model"},
			&cli.StringFlag{Name: "data", Usage: "images for the forward path (default: the test split of the run's data)"},
			&cli.IntFlag{Name: "n", Value: 6, Usage: "samples (and test images)"},
			&cli.IntFlag{Name: "times", Value: 10, Usage: "times along each path"},
			&cli.IntFlag{Name: "scale", Value: 2, Usage: "pixel repetition of the tiles"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed of the sampler and of the forward noise"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			&cli.StringFlag{Name: "out", Value: "trajectory.png", Usage: "output .png"},
		),
		Action: runPlotTrajectory,
	}
}

func runPlotTrajectory(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut("out", out); err != nil {
		return err
	}
	n, nt, scale := c.Int("n"), c.Int("times"), c.Int("scale")
	if n < 1 || n > 64 || nt < 2 || nt > 40 || scale < 1 || scale > 8 {
		return usageErr("plot trajectory: want --n in 1…64, --times in 2…40, --scale in 1…8; got %d, %d, %d", n, nt, scale)
	}
	if err := setThreads(c); err != nil {
		return err
	}
	m, ds, test, spec, err := imageModelAndImages(c, "plot trajectory", n)
	if err != nil {
		return err
	}
	s, err := samplerSpecFrom(c).Build(m.SDE, m.Score, ds.Dimension())
	if err != nil {
		return usageErr("%v", err)
	}
	times, err := trajectoryTimes(m, s.Grid, nt)
	if err != nil {
		return err
	}
	s.Record = times
	nt = len(times) // times that fall on the same grid point count once
	res, err := s.Sample(n, c.Uint64("seed"))
	if err != nil {
		return err
	}
	blocks, d := m.SDE.Blocks(), ds.Dimension()
	// Forward path: u_t = m_t q0 + L_t ε from the first n test images, one ε per image for all times.
	q0 := make([]float32, n*d)
	for i := range n {
		test.Scale(q0[i*d:(i+1)*d], test.Pixels(i), false, nil)
	}
	eps := make([]float64, n*blocks*d)
	r := rng.New(c.Uint64("seed") ^ 0xf0e1)
	for i := range eps {
		eps[i] = r.Normal()
	}
	tiles := make([]float32, 0, 2*n*blocks*nt*d)
	add := func(state func(k int) []float64) { // rows: sample, channel; columns: times
		for i := range n {
			for b := range blocks {
				for k, t := range times {
					kern := m.SDE.Kernel(t)
					mb := kern.Mean.At(b, 0)
					std := math.Sqrt(kern.Sigma.At(b, b) + mb*mb/3)
					row := state(k)[i*blocks*d+b*d : i*blocks*d+(b+1)*d]
					for _, v := range row {
						tiles = append(tiles, float32(v/(2.5*std)))
					}
				}
			}
		}
	}
	add(func(k int) []float64 { return res.Trajectory.States[k] })
	fwd := make([][]float64, nt)
	for k, t := range times {
		u := make([]float64, n*blocks*d)
		forwardStates(u, q0, eps, m.SDE.Kernel(t), n, blocks, d)
		fwd[k] = u
	}
	add(func(k int) []float64 { return fwd[k] })
	if err := imagedata.WriteGrid(out, tiles, 2*n*blocks*nt, ds.C, ds.H, ds.W, nt, scale); err != nil {
		return err
	}
	var labels []string
	for _, t := range times {
		labels = append(labels, fmt.Sprintf("%.4g", t))
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d samples × %d channels, sampler %s (NFE %d), then %d test images of %s forward; columns at t = %s\n",
		out, n, blocks, s.Method.Name(), res.NFE, n, spec, strings.Join(labels, ", "))
	return nil
}

// trajectoryTimes returns nt times from the grid's start to its end, evenly spaced in log σ of the
// sufficient statistic, each moved to the first grid time at or below it (where fixed-step samplers record).
func trajectoryTimes(m *train.Model, grid []float64, nt int) ([]float64, error) {
	start, end := grid[0], grid[len(grid)-1]
	s0, err := sample.NoiseLevel(m.SDE, start)
	if err != nil {
		return nil, err
	}
	s1, err := sample.NoiseLevel(m.SDE, end)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, nt)
	for k := range nt {
		target := math.Exp(math.Log(s0) + float64(k)/float64(nt-1)*(math.Log(s1)-math.Log(s0)))
		t, err := sample.TimeAtNoiseLevel(m.SDE, target, end, start)
		if err != nil {
			t = end
		}
		pick := end
		for _, g := range grid {
			if g <= t*(1+1e-12) {
				pick = g
				break
			}
		}
		if len(out) == 0 || pick < out[len(out)-1] {
			out = append(out, pick)
		}
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("plot trajectory: the grid has too few steps for %d times", nt)
	}
	return out, nil
}

// testSplit returns the test split of an image data spec (KIND:DIR#test), or spec itself when it names
// a split already.
func testSplit(spec string) string {
	if strings.Contains(spec, "#") {
		return spec
	}
	return spec + "#test"
}

// imageModelAndImages loads --ckpt as an image model and opens --data (default: the test split of the
// run's data), checking that it holds at least n images of the model's shape.
func imageModelAndImages(c *cli.Context, cmd string, n int) (*train.Model, *imagedata.Dataset, *imagedata.Dataset, string, error) {
	m, err := train.LoadModel(c.String("ckpt"), false, "")
	if err != nil {
		return nil, nil, nil, "", usageErr("%s: %v", cmd, err)
	}
	ds, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return nil, nil, nil, "", usageErr("%s: %s models %s, not images", cmd, c.String("ckpt"), m.Source.Name())
	}
	spec := c.String("data")
	if spec == "" {
		spec = testSplit(m.Config.Data)
	}
	test, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, nil, nil, "", usageErr("%s --data: %v (give --data KIND:DIR)", cmd, err)
	}
	if test.C != ds.C || test.H != ds.H || test.W != ds.W || test.Len() < n {
		return nil, nil, nil, "", usageErr("%s --data %s: %d images of %d×%d×%d; the model needs %d of %d×%d×%d",
			cmd, spec, test.Len(), test.C, test.H, test.W, n, ds.C, ds.H, ds.W)
	}
	return m, ds, test, spec, nil
}

// forwardStates writes u = m_t q0 + L_t ε (n samples of blocks×d values) for the kernel at t.
func forwardStates(u []float64, q0 []float32, eps []float64, kern hold.Kernel, n, blocks, d int) {
	for i := range n {
		for b := range blocks {
			for j := range d {
				v := kern.Mean.At(b, 0) * float64(q0[i*d+j])
				for e := 0; e <= b; e++ {
					v += kern.Chol.At(b, e) * eps[i*blocks*d+e*d+j]
				}
				u[i*blocks*d+b*d+j] = v
			}
		}
	}
}
