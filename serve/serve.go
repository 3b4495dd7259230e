// Package serve is holdctl serve: a local web page over a trained image model (issue 46, item 5), where
// one restores a test image or an upload with package restore's methods and sees the progress, the
// restoration and its measures, or samples a grid. Restoration runs restore's code path (restore.Prepare,
// Job.SetImages, Job.Restore, Job.Measure) on one image at a time, plain sampling sample's (the image
// sampler of sample.Spec.ImageDefaults at the page's NFE); the model is loaded once. The HTTP side is in
// http.go, the queue of jobs in jobs.go, the page in page/. Only cmd/holdctl imports it.
package serve

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

	"holdgo/imagedata"
	"holdgo/restore"
	"holdgo/sample"
	"holdgo/train"
)

// The page's bounds.
const (
	DefaultAddr     = "127.0.0.1:8080"
	serveMaxWaiting = 4       // jobs waiting behind the running one; one more is refused with 503
	serveMaxBody    = 1 << 20 // bytes of a request body (an upload included)
	serveMaxNFE     = 1000    // forward passes of one restoration or one sampling run
	serveMaxSamples = 64      // images of one sampling run
	serveMaxNoise   = 10      // σ_y, in the data's units ([−1, 1])
	serveKeepJobs   = 32      // finished jobs whose results stay available
	serveKeepUpload = 16      // uploaded images kept
	// FashionMNIST is where Debian's dataset-fashion-mnist puts Fashion-MNIST: the default test
	// images of a 1×28×28 model.
	FashionMNIST = "/usr/share/datasets/fashion-mnist"
)

// InputError is an error of serve's settings or inputs (the command's exit status 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr is an InputError of the message.
func inputErr(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// CheckAddr refuses an --addr that is not HOST:PORT, and one whose host is not a loopback address
// (127.0.0.0/8, ::1, localhost) unless public: an empty host listens on every interface.
func CheckAddr(addr string, public bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return inputErr("--addr %s: want HOST:PORT such as %s (%v)", addr, DefaultAddr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return inputErr("--addr %s: the port must be a number in [0, 65535] (0: any free port)", addr)
	}
	if public || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		what := "is not a loopback address"
		if host == "" {
			what = "listens on every interface"
		}
		return inputErr("--addr %s %s: the page runs jobs for anyone who reaches it, so serve keeps to this machine (127.0.0.1:PORT); give --public to listen there anyway", addr, what)
	}
	return nil
}

// Listen listens on addr (CheckAddr's), refusing an address that resolved to a non-loopback one
// (localhost elsewhere) unless public.
func Listen(addr string, public bool) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, inputErr("--addr %s: %v", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !public && !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, inputErr("--addr %s listens on %s, not a loopback address; give --public to allow it", addr, tcp.IP)
	}
	return ln, nil
}

// Config is what New needs.
type Config struct {
	Ckpt    string
	Model   *train.Model
	In      string // test images; "" the default
	InSet   bool   // --in was given: an error reading it is the user's
	Public  bool   // --public: any Host header is accepted
	Log     *log.Logger
	Version string // holdctl's, in the restorations' reports
}

// New checks the model, reads the test images and the defaults of restore and sample, and starts
// the job queue's worker. Close stops it.
func New(cfg Config) (*Server, error) {
	m := cfg.Model
	shape, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return nil, inputErr("--ckpt %s is a model of %s, not of images: serve needs an image model", cfg.Ckpt, m.Config.Data)
	}
	if shape.H < restore.SSIMMinSide || shape.W < restore.SSIMMinSide {
		return nil, inputErr("--ckpt %s is a model of %d×%d images; serve reports SSIM, whose window needs %d×%d pixels at least",
			cfg.Ckpt, shape.H, shape.W, restore.SSIMMinSide, restore.SSIMMinSide)
	}
	if shape.C != 1 && shape.C != 3 {
		return nil, inputErr("--ckpt %s is a model of %d-channel images; the page shows gray (1) or RGB (3) images", cfg.Ckpt, shape.C)
	}
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	s := &Server{ckpt: cfg.Ckpt, model: m, shape: shape, public: cfg.Public, log: cfg.Log, version: cfg.Version,
		uploads: newUploadStore(serveKeepUpload)}
	spec := cfg.In
	if !cfg.InSet {
		spec = defaultTestSet(shape)
	}
	if spec != "" {
		if !imagedata.IsSpec(spec) {
			return nil, inputErr("--in %s: want a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …)", spec)
		}
		ds, err := imagedata.Open(spec, imagedata.Options{})
		switch {
		case err != nil && cfg.InSet:
			return nil, inputErr("--in: %v", err)
		case err != nil:
			cfg.Log.Printf("no test images (%v): uploads only", err)
		case ds.C != shape.C || ds.H != shape.H || ds.W != shape.W:
			return nil, inputErr("--in %s holds %d×%d×%d images (C×H×W), the model's are %d×%d×%d", spec, ds.C, ds.H, ds.W, shape.C, shape.H, shape.W)
		default:
			s.test, s.testSpec = ds, spec
		}
	}
	// holdctl restore's settings with no flag given; the page sets the task, σ_y, the method, the NFE
	// and the seed, and restores one image once.
	s.restoreDefaults = restore.DefaultParams()
	s.restoreDefaults.Ckpt = cfg.Ckpt
	s.restoreDefaults.N, s.restoreDefaults.K, s.restoreDefaults.Outs = 1, 1, nil
	// holdctl sample's sampler for an image model with no sampler flag given; the page sets the NFE.
	s.sampleSpec = sample.DefaultSpec()
	if imagedata.IsSpec(m.Config.Data) {
		s.sampleSpec.ImageDefaults(func(string) bool { return false }, true)
	}
	var err error
	if s.page, err = parsePage(); err != nil {
		return nil, err
	}
	s.jobs = newJobQueue(serveMaxWaiting, serveKeepJobs, cfg.Log)
	return s, nil
}

// defaultTestSet is Fashion-MNIST's test set for a 1×28×28 model where Debian's
// dataset-fashion-mnist is installed, or "" (uploads only).
func defaultTestSet(shape *imagedata.Dataset) string {
	if shape.C != 1 || shape.H != 28 || shape.W != 28 {
		return ""
	}
	if st, err := os.Stat(FashionMNIST); err != nil || !st.IsDir() {
		return ""
	}
	return "fashion-mnist:" + FashionMNIST + "#test"
}

// Serve answers the page's requests on ln until it fails; net/http's own errors go to the log.
func (s *Server) Serve(ln net.Listener) error {
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, ErrorLog: s.log}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Describe is the start-up line's part about the model and the test images: "ckpt (SDE, C×H×W
// images); test images SPEC (N)".
func (s *Server) Describe() string {
	tests := "no test images (uploads only; --in gives some)"
	if s.test != nil {
		tests = fmt.Sprintf("test images %s (%d)", s.testSpec, s.test.Len())
	}
	return fmt.Sprintf("%s (%s, %d×%d×%d images); %s", s.ckpt, s.model.Config.SDE, s.shape.C, s.shape.H, s.shape.W, tests)
}
