package main

// holdctl serve: a local web page over a trained image model (issue 46, item 5; package serve). The
// command binds the flags, loads the model once, listens and prints the start-up line.

import (
	"errors"
	"fmt"
	"log"

	"github.com/urfave/cli/v2"

	"holdgo/internal/parallel"
	"holdgo/serve"
	"holdgo/train"
)

func serveCommand() *cli.Command {
	var opt parallel.ThreadsOption
	return withConfig(&cli.Command{
		Name:  "serve",
		Usage: "a local web page to restore and sample images with a trained image model",
		Description: "Serves a page on --addr (127.0.0.1:8080; a non-loopback address only with --public) where one picks a\n" +
			"test image of --in or uploads a PNG of the model's size, draws the region to fill or chooses a task of\n" +
			"holdctl restore with σ_y, a method and the NFE, and sees the progress, the restoration with its PSNR, SSIM\n" +
			"and RMS(A x − y), and downloads it; or samples a grid. One job runs at a time, 4 more wait, and a request\n" +
			"beyond that is answered 503 (busy). Requests are at most 1 MiB; no file path is taken from the page.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained image model: a run directory, checkpoint file or export (models/fmnist-hold3)"},
			&cli.BoolFlag{Name: "raw-weights", Usage: "use the raw weights instead of the EMA weights (a run, not an export)"},
			&cli.StringFlag{Name: "addr", Value: serve.DefaultAddr, Usage: "HOST:PORT to listen on; a loopback address (127.0.0.1, ::1, localhost) unless --public; port 0 picks a free one"},
			&cli.BoolFlag{Name: "public", Usage: "allow a non-loopback --addr: anyone who reaches it can run jobs on this machine"},
			&cli.StringFlag{Name: "in", Usage: "test images to pick from: a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) of the model's shape; " +
				"default Fashion-MNIST's test set for a 1×28×28 model when " + serve.FashionMNIST + " exists, otherwise uploads only"},
		},
		Before: oneProcess("serve"),
		Action: func(c *cli.Context) error {
			opt.Apply()
			return runServe(c)
		},
	}, &opt)
}

func runServe(c *cli.Context) error {
	addr, public := c.String("addr"), c.Bool("public")
	if err := serve.CheckAddr(addr, public); err != nil {
		return serveErr(err)
	}
	m, err := train.LoadModel(c.String("ckpt"), c.Bool("raw-weights"), "")
	if err != nil {
		return usageErr("%v", err)
	}
	logger := log.New(c.App.ErrWriter, "holdctl serve: ", log.LstdFlags)
	s, err := serve.New(serve.Config{Ckpt: c.String("ckpt"), Model: m, In: c.String("in"), InSet: c.IsSet("in"), Public: public,
		Log: logger, Version: version})
	if err != nil {
		return serveErr(err)
	}
	defer s.Close()
	ln, err := serve.Listen(addr, public)
	if err != nil {
		return serveErr(err)
	}
	fmt.Fprintf(c.App.Writer, "holdctl serve: %s; serving on http://%s/ (Ctrl-C stops)\n", s.Describe(), ln.Addr())
	if err := s.Serve(ln); err != nil {
		return fmt.Errorf("holdctl serve: %w", err)
	}
	return nil
}

// serveErr is serve's error: one of its settings or inputs (serve.InputError) exits with status 2,
// another with 1.
func serveErr(err error) error {
	var ie *serve.InputError
	if errors.As(err, &ie) {
		return usageErr("%v", ie)
	}
	return fmt.Errorf("holdctl serve: %w", err)
}
