package main

// holdctl serve: a local web page over a trained image model (issue 46, item 5; package serve). The
// command binds the flags and runs serve.Run, which loads the model once, listens and prints the
// start-up line.

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/internal/clibind"
	"holdgo/serve"
)

func serveCommand() *cli.Command {
	opt := serve.Options{Addr: serve.DefaultAddr}
	cmd := withConfig(&cli.Command{
		Name:  "serve",
		Usage: "a local web page to restore and sample images with a trained image model",
		Description: "Serves a page on --addr (127.0.0.1:8080; a non-loopback address only with --public) where one picks a\n" +
			"test image of --in or uploads a PNG of the model's size, draws the region to fill or chooses a task of\n" +
			"holdctl restore with σ_y, a method and the NFE, and sees the progress, the restoration with its PSNR, SSIM\n" +
			"and RMS(A x − y), and downloads it; or samples a grid. One job runs at a time, 4 more wait, and a request\n" +
			"beyond that is answered 503 (busy). Requests are at most 1 MiB; no file path is taken from the page.",
		Before: oneProcess("serve"),
		Action: func(c *cli.Context) error {
			return serveErr(serve.Run(opt, c.IsSet("in"), version, c.App.Writer, c.App.ErrWriter))
		},
	}, &opt)
	clibind.SetUsage(cmd, "in", "test images to pick from: a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) of the model's shape; "+
		"default Fashion-MNIST's test set for a 1×28×28 model when "+serve.FashionMNIST+" exists, otherwise uploads only")
	return cmd
}

// serveErr is serve's error: one of its settings or inputs (serve.InputError) exits with status 2,
// another with 1.
func serveErr(err error) error {
	var ie *serve.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return usageErr("%v", ie)
	}
	return fmt.Errorf("holdctl serve: %w", err)
}
