package main

import "github.com/urfave/cli/v2"

// deviceFlag is --device of the commands that run a network.
func deviceFlag() cli.Flag {
	return &cli.StringFlag{Name: "device", Value: "cpu", Usage: "where the network runs: cpu, or cuda / cuda:N (a binary built with -tags cuda, or holdctl-shim: -tags cudashim)"}
}
