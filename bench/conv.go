package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"holdgo/cuda"
	"holdgo/internal/atomicfile"
	"holdgo/internal/devices"
	"holdgo/internal/outpath"
	"holdgo/tensor"
)

// ConvRun is holdctl bench conv's settings beside --device.
type ConvRun struct {
	Model     string  `flag:"model" help:"an NCSN++ preset: ncsnpp-tiny, ncsnpp-small, ncsnpp-cifar10"`
	Batch     int     `flag:"batch" min:"1" max:"4096" help:"batch size of the training step whose convolutions are timed"`
	Channels  int     `flag:"channels" min:"1" max:"64" help:"NCSN++ image channels"`
	Reps      int     `flag:"reps" min:"1" max:"1000" help:"timed runs per cell (the median is reported)"`
	MaxShapes int     `flag:"max-shapes" min:"0" max:"1000" note:"0: all" help:"time only the shapes with the most FLOPs per step (0: all)"`
	PeakTF32  float64 `flag:"peak-tf32" min:"0" help:"the GPU's dense TF32 tensor-core peak in TFLOP/s, for the % columns (BF16's: twice it; 0: none; H100/H200 SXM: 494.7)"`
	JSON      bool    `flag:"json" help:"print the cells as JSON"`
	Tiles     string  `flag:"tiles" help:"also time every pass of each shape at both tiles (64, 128) in TF32 and BF16 and write the faster tiles as a table for this GPU and build to this file (JSON; commit it as cuda/convtiles.json, or add its entry there, to use it: docs/gpu.md)"`
}

// ConvShapes returns the distinct convolutions of one training step of model at batch (from the
// recording device: nothing runs) with their counts, the most FLOPs per step first.
func ConvShapes(model string, batch, channels int) ([]cuda.ConvGeom, []int, error) {
	dev, _ := cuda.NewRecordingDevice()
	res, err := Train(dev, nil, model, "hold", batch, 1, channels, false)
	if err != nil {
		return nil, nil, err
	}
	if len(res.RecordStep.ConvShapes) == 0 {
		return nil, nil, fmt.Errorf("%s has no convolutions", model)
	}
	type shape struct {
		g cuda.ConvGeom
		n int
	}
	var all []shape
	for key, n := range res.RecordStep.ConvShapes {
		g, err := cuda.ParseConvShape(key)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, shape{g, n})
	}
	slices.SortFunc(all, func(a, b shape) int {
		fa, fb := a.g.Flops()*float64(a.n), b.g.Flops()*float64(b.n)
		switch {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return cmpGeom(a.g, b.g)
	})
	gs, ns := make([]cuda.ConvGeom, len(all)), make([]int, len(all))
	for i, s := range all {
		gs[i], ns[i] = s.g, s.n
	}
	return gs, ns, nil
}

func cmpGeom(a, b cuda.ConvGeom) int {
	for _, d := range [][2]int{{a.N, b.N}, {a.C, b.C}, {a.H, b.H}, {a.W, b.W}, {a.O, b.O}, {a.K, b.K}, {a.S, b.S}, {a.P, b.P}} {
		if d[0] != d[1] {
			return d[0] - d[1]
		}
	}
	return 0
}

// RunConv times the convolutions of r.Model's training step on device, per pass and path
// (cuda.BenchConvs), and prints the table or JSON; the settings and the device are the user's
// (*InputError).
func RunConv(r ConvRun, device string, w io.Writer) error {
	dev, err := devices.Open(device)
	if err != nil {
		return &InputError{err}
	}
	cd, ok := dev.(*cuda.Device)
	if !ok {
		return &InputError{fmt.Errorf("bench conv times the CUDA device's convolution kernels: use --device cuda or cuda:N (or holdctl-shim), not %s", device)}
	}
	if r.Tiles != "" { // through the output guard, before minutes of timing, not after
		if err := outpath.New(false).Check(r.Tiles, outpath.Text); err != nil {
			return &InputError{fmt.Errorf("--tiles: %w", err)}
		}
	}
	shapes, counts, err := ConvShapes(r.Model, r.Batch, r.Channels)
	if err != nil {
		return &InputError{err}
	}
	if r.MaxShapes > 0 && len(shapes) > r.MaxShapes {
		shapes, counts = shapes[:r.MaxShapes], counts[:r.MaxShapes]
	}
	cells, err := cuda.BenchConvs(cd, shapes, counts, r.Reps)
	if errors.Is(err, cuda.ErrNoTimer) {
		return &InputError{fmt.Errorf("%s: %w", device, err)}
	}
	if err != nil {
		return err
	}
	var tiles []cuda.TileTiming
	if r.Tiles != "" {
		table, tt, err := cuda.TuneConvTiles(cd, shapes, counts, r.Reps)
		if err != nil {
			return err
		}
		data, err := json.MarshalIndent([]cuda.ConvTileTable{table}, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(r.Tiles, append(data, '\n')); err != nil {
			return &InputError{fmt.Errorf("--tiles: %w", err)}
		}
		tiles = tt
	}
	if r.JSON {
		return json.NewEncoder(w).Encode(map[string]any{"model": r.Model, "batch": r.Batch, "device": device, "cells": cells, "tiles": tiles})
	}
	fmt.Fprintf(w, "bench conv: %s at batch %d on %s, %d distinct convolutions, median of %d runs (CUDA events)\n",
		r.Model, r.Batch, tensor.Device(cd).Name(), len(shapes), r.Reps)
	cuda.WriteConvTable(w, cells, r.PeakTF32)
	if r.Tiles != "" {
		fmt.Fprintf(w, "tile table (written to %s):\n", r.Tiles)
		cuda.WriteTileSummary(w, tiles)
	}
	return nil
}
