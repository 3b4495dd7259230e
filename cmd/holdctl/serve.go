package main

// holdctl serve: a local web page over a trained image model (issue 46, item 5). Restoration runs
// restore's code path (restore.Prepare, Job.SetImages, Job.Restore, Job.Measure) on one image at a time, plain
// sampling sample's (samplerSpecFrom and imageDefaults, the page's NFE); the model is loaded once.
// The HTTP side is in serve_http.go, the queue of jobs in serve_jobs.go, the page in servepage/.

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/imagedata"
	"holdgo/restore"
	"holdgo/sample"
	"holdgo/train"
)

// The page's bounds.
const (
	serveAddr       = "127.0.0.1:8080"
	serveMaxWaiting = 4       // jobs waiting behind the running one; one more is refused with 503
	serveMaxBody    = 1 << 20 // bytes of a request body (an upload included)
	serveMaxNFE     = 1000    // forward passes of one restoration or one sampling run
	serveMaxSamples = 64      // images of one sampling run
	serveMaxNoise   = 10      // σ_y, in the data's units ([−1, 1])
	serveKeepJobs   = 32      // finished jobs whose results stay available
	serveKeepUpload = 16      // uploaded images kept
	// serveFashionMNIST is where Debian's dataset-fashion-mnist puts Fashion-MNIST: the default test
	// images of a 1×28×28 model.
	serveFashionMNIST = "/usr/share/datasets/fashion-mnist"
)

func serveCommand() *cli.Command {
	var opt threadsOption
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
			&cli.StringFlag{Name: "addr", Value: serveAddr, Usage: "HOST:PORT to listen on; a loopback address (127.0.0.1, ::1, localhost) unless --public; port 0 picks a free one"},
			&cli.BoolFlag{Name: "public", Usage: "allow a non-loopback --addr: anyone who reaches it can run jobs on this machine"},
			&cli.StringFlag{Name: "in", Usage: "test images to pick from: a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) of the model's shape; " +
				"default Fashion-MNIST's test set for a 1×28×28 model when " + serveFashionMNIST + " exists, otherwise uploads only"},
		},
		Before: oneProcess("serve"),
		Action: func(c *cli.Context) error {
			opt.apply()
			return runServe(c)
		},
	}, &opt)
}

func runServe(c *cli.Context) error {
	if err := checkServeAddr(c.String("addr"), c.Bool("public")); err != nil {
		return err
	}
	m, err := train.LoadModel(c.String("ckpt"), c.Bool("raw-weights"), "")
	if err != nil {
		return usageErr("%v", err)
	}
	logger := log.New(c.App.ErrWriter, "holdctl serve: ", log.LstdFlags)
	s, err := newServer(serveConfig{Ckpt: c.String("ckpt"), Model: m, In: c.String("in"), InSet: c.IsSet("in"), Public: c.Bool("public"), Log: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return usageErr("--addr %s: %v", c.String("addr"), err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !c.Bool("public") && !tcp.IP.IsLoopback() { // localhost resolved elsewhere
		ln.Close()
		return usageErr("--addr %s listens on %s, not a loopback address; give --public to allow it", c.String("addr"), tcp.IP)
	}
	defer s.close()
	fmt.Fprintf(c.App.Writer, "holdctl serve: %s (%s, %d×%d×%d images); %s; serving on http://%s/ (Ctrl-C stops)\n",
		s.ckpt, m.Config.SDE, s.shape.C, s.shape.H, s.shape.W, s.testLine(), ln.Addr())
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, ErrorLog: logger}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("holdctl serve: %w", err)
	}
	return nil
}

// checkServeAddr refuses an --addr that is not HOST:PORT, and one whose host is not a loopback
// address (127.0.0.0/8, ::1, localhost) unless public: an empty host listens on every interface.
func checkServeAddr(addr string, public bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--addr %s: want HOST:PORT such as %s (%v)", addr, serveAddr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return usageErr("--addr %s: the port must be a number in [0, 65535] (0: any free port)", addr)
	}
	if public || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		what := "is not a loopback address"
		if host == "" {
			what = "listens on every interface"
		}
		return usageErr("--addr %s %s: the page runs jobs for anyone who reaches it, so serve keeps to this machine (127.0.0.1:PORT); give --public to listen there anyway", addr, what)
	}
	return nil
}

// serveConfig is what newServer needs.
type serveConfig struct {
	Ckpt   string
	Model  *train.Model
	In     string // test images; "" the default
	InSet  bool   // --in was given: an error reading it is the user's
	Public bool   // --public: any Host header is accepted
	Log    *log.Logger
}

// newServer checks the model, reads the test images and the defaults of restore and sample, and
// starts the job queue's worker.
func newServer(cfg serveConfig) (*server, error) {
	m := cfg.Model
	shape, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return nil, usageErr("--ckpt %s is a model of %s, not of images: serve needs an image model", cfg.Ckpt, m.Config.Data)
	}
	if shape.H < restore.SSIMMinSide || shape.W < restore.SSIMMinSide {
		return nil, usageErr("--ckpt %s is a model of %d×%d images; serve reports SSIM, whose window needs %d×%d pixels at least",
			cfg.Ckpt, shape.H, shape.W, restore.SSIMMinSide, restore.SSIMMinSide)
	}
	if shape.C != 1 && shape.C != 3 {
		return nil, usageErr("--ckpt %s is a model of %d-channel images; the page shows gray (1) or RGB (3) images", cfg.Ckpt, shape.C)
	}
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	s := &server{ckpt: cfg.Ckpt, model: m, shape: shape, public: cfg.Public, log: cfg.Log, uploads: newUploadStore(serveKeepUpload)}
	spec := cfg.In
	if !cfg.InSet {
		spec = defaultServeTestSet(shape)
	}
	if spec != "" {
		if !imagedata.IsSpec(spec) {
			return nil, usageErr("--in %s: want a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …)", spec)
		}
		ds, err := imagedata.Open(spec, imagedata.Options{})
		switch {
		case err != nil && cfg.InSet:
			return nil, usageErr("--in: %v", err)
		case err != nil:
			cfg.Log.Printf("no test images (%v): uploads only", err)
		case ds.C != shape.C || ds.H != shape.H || ds.W != shape.W:
			return nil, usageErr("--in %s holds %d×%d×%d images (C×H×W), the model's are %d×%d×%d", spec, ds.C, ds.H, ds.W, shape.C, shape.H, shape.W)
		default:
			s.test, s.testSpec = ds, spec
		}
	}
	var err error
	if s.restoreDefaults, err = restoreDefaults(); err != nil {
		return nil, err
	}
	if s.sampleSpec, err = sampleDefaults(m); err != nil {
		return nil, err
	}
	s.restoreDefaults.Ckpt = cfg.Ckpt
	if s.page, err = parsePage(); err != nil {
		return nil, err
	}
	s.jobs = newJobQueue(serveMaxWaiting, serveKeepJobs, cfg.Log)
	return s, nil
}

// defaultServeTestSet is Fashion-MNIST's test set for a 1×28×28 model where Debian's
// dataset-fashion-mnist is installed, or "" (uploads only).
func defaultServeTestSet(shape *imagedata.Dataset) string {
	if shape.C != 1 || shape.H != 28 || shape.W != 28 {
		return ""
	}
	if st, err := os.Stat(serveFashionMNIST); err != nil || !st.IsDir() {
		return ""
	}
	return "fashion-mnist:" + serveFashionMNIST + "#test"
}

// testLine says where the test images come from, for the start-up line.
func (s *server) testLine() string {
	if s.test == nil {
		return "no test images (uploads only; --in gives some)"
	}
	return fmt.Sprintf("test images %s (%d)", s.testSpec, s.test.Len())
}

// withFlagDefaults runs action on a context of flags that hold their defaults (no argument given): the
// settings a command uses when none is given, read by the command's own function.
func withFlagDefaults(flags []cli.Flag, action cli.ActionFunc) error {
	app := &cli.App{Name: "holdctl", Writer: io.Discard, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{{Name: "defaults", Flags: flags, Action: action}}}
	return app.Run([]string{"holdctl", "defaults"})
}

// restoreDefaults are holdctl restore's settings with no flag given (restoreParamsFrom); the page
// sets the task, σ_y, the method, the NFE and the seed, and restores one image once.
func restoreDefaults() (restore.Params, error) {
	var p restore.Params
	err := withFlagDefaults(restoreCommand().Flags, func(c *cli.Context) error {
		p = restoreParamsFrom(c, restoreOptions{restoreNumbers: defaultRestoreNumbers(1), NFE: 50})
		return nil
	})
	p.N, p.K, p.Outs = 1, 1, nil
	return p, err
}

// sampleDefaults is holdctl sample's sampler for an image model with no sampler flag given
// (samplerSpecFrom and imageDefaults); the page sets the NFE.
func sampleDefaults(m *train.Model) (sample.Spec, error) {
	spec := defaultSampler().spec(noFlags)
	imageDefaults(noFlags, m, &spec, io.Discard, true)
	return spec, nil
}
