package serve

import (
	"fmt"
	"io"
	"log"

	"holdgo/internal/parallel"
	"holdgo/train"
)

// Options are holdctl serve's settings, tagged (internal/cliconf). In's help names FashionMNIST, so
// the command sets it.
type Options struct {
	parallel.ThreadsOption
	Ckpt       string `flag:"ckpt" required:"true" help:"trained image model: a run directory, checkpoint file or export (models/fmnist-hold3)"`
	RawWeights bool   `flag:"raw-weights" help:"use the raw weights instead of the EMA weights (a run, not an export)"`
	Addr       string `flag:"addr" help:"HOST:PORT to listen on; a loopback address (127.0.0.1, ::1, localhost) unless --public; port 0 picks a free one"`
	Public     bool   `flag:"public" help:"allow a non-loopback --addr: anyone who reaches it can run jobs on this machine"`
	In         string `flag:"in" help:"test images to pick from"`
}

// Run is holdctl serve: it checks o.Addr, loads the model once, starts the server (New; inSet: --in
// was given), listens, writes the start-up line on w and serves until the listener fails; the log
// goes to logTo. The settings' and the inputs' errors are *InputError.
func Run(o Options, inSet bool, version string, w, logTo io.Writer) error {
	o.Apply()
	if err := CheckAddr(o.Addr, o.Public); err != nil {
		return err
	}
	m, err := train.LoadModel(o.Ckpt, o.RawWeights, "")
	if err != nil {
		return &InputError{err}
	}
	logger := log.New(logTo, "holdctl serve: ", log.LstdFlags)
	s, err := New(Config{Ckpt: o.Ckpt, Model: m, In: o.In, InSet: inSet, Public: o.Public, Log: logger, Version: version})
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := Listen(o.Addr, o.Public)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "holdctl serve: %s; serving on http://%s/ (Ctrl-C stops)\n", s.Describe(), ln.Addr())
	return s.Serve(ln)
}
