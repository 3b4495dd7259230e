package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/internal/devices"
	"holdgo/tensor"
)

// precisionFlag is --precision of the commands that run a network on a GPU (train has it in its
// run configuration).
func precisionFlag() cli.Flag {
	return &cli.StringFlag{Name: "precision", Value: "tf32", Usage: "GPU arithmetic: tf32 (TF32 tensor cores for the " +
		"GEMMs and convolutions; the default), bf16 (BF16 tensor-core products, FP32 sums and storage) or strict " +
		"(FP32 everywhere); the CPU computes in FP32 either way"}
}

// openFlag returns the device opener of --precision (exit status 2 for a bad value).
func openFlag(c *cli.Context) (func(string) (tensor.Device, error), error) {
	open, err := devices.OpenWithPrecision(c.String("precision"))
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return open, nil
}

// deviceFlag is --device of the commands that run a network.
func deviceFlag() cli.Flag {
	return &cli.StringFlag{Name: "device", Value: "cpu", Usage: "where the network runs: cpu, or cuda / cuda:N (a binary built with -tags cuda, or holdctl-shim: -tags cudashim)"}
}
