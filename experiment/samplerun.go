package experiment

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// InputError is an error of a command's settings or inputs (holdctl's exit status 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr is an InputError of the message.
func inputErr(format string, args ...any) error { return &InputError{fmt.Errorf(format, args...)} }

// asInput is err as an InputError (nil stays nil).
func asInput(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{err}
}

// ImageDefaults fills in, for a trained image network (imagedata run or export), the sampler settings
// the user did not give (isSet, by flag name; sample.Spec.ImageDefaults: --clip 1, and with sampler the
// measured best sampler) and says what it chose in one line on w; --clip 0 turns thresholding off.
func ImageDefaults(isSet func(string) bool, m *train.Model, spec *sample.Spec, w io.Writer, sampler bool) {
	if !imagedata.IsSpec(m.Config.Data) {
		return
	}
	if chosen := spec.ImageDefaults(isSet, sampler); len(chosen) > 0 {
		fmt.Fprintf(w, "image model: %s (the defaults for images; give a flag to change it, --clip 0 turns thresholding off)\n", strings.Join(chosen, " "))
	}
}

// LoadOrOracle is the model of a command that samples a trained run (ckpt given: train.LoadModel of
// ckpt, raw, trainData) or the exact score of oracle's data (train.OracleModel of oracle, oracleN): one
// of the two, else an InputError that says what to give (cmd names the command). Every error is about
// the input.
func LoadOrOracle(cmd string, ckptGiven bool, ckpt string, raw bool, trainData string, useOracle bool,
	oracle train.RunConfig, oracleN int) (*train.Model, error) {
	var (
		m   *train.Model
		err error
	)
	switch {
	case useOracle && ckptGiven:
		return nil, inputErr("give either --ckpt or --oracle, not both")
	case useOracle:
		m, err = train.OracleModel(oracle, oracleN)
	case ckptGiven:
		m, err = train.LoadModel(ckpt, raw, trainData)
	default:
		return nil, inputErr("%s needs --ckpt DIR (a trained run) or --oracle (exact score of mixture data)", cmd)
	}
	return m, asInput(err)
}

// SampleRun is holdctl sample after its flags are read: the model (a trained run or an oracle), the
// sampler and the files to write.
type SampleRun struct {
	SpecFlags sample.SpecFlags
	IsSet     func(string) bool // which flags were given (a cli.Context's IsSet)
	Ckpt      string            // with IsSet("ckpt"): the trained run
	Raw       bool              // the raw weights instead of the EMA weights
	TrainData string            // a run on a .npy file: its points from here
	Oracle    bool              // the exact score of OracleConfig's data (OracleConfig.Data)
	// OracleConfig holds the oracle's data, SDE and HOLD settings; OracleN the images of an
	// empirical oracle.
	OracleConfig train.RunConfig
	OracleN      int
	N            int
	Seed         uint64
	Outs         []string // .npy and/or pictures
	Force        bool     // --force of the output guard
	Device       string   // --device, opened by Open after every other check
	Open         func(name string) (tensor.Device, error)
}

// RunSample loads the model, checks the outputs, builds the sampler (an image network's defaults
// said on w), draws r.N samples on r.Device into r.Outs and says so on w, warning on errw of diverged
// samples. Errors of the settings and inputs are InputErrors.
func RunSample(r SampleRun, w, errw io.Writer) error {
	ckptGiven := r.IsSet("ckpt")
	m, err := LoadOrOracle("sample", ckptGiven, r.Ckpt, r.Raw, r.TrainData, r.Oracle, r.OracleConfig, r.OracleN)
	if err != nil {
		return err
	}
	if err := m.SetForwardMiB(r.SpecFlags.ForwardMiB); err != nil {
		return asInput(err)
	}
	n, dim := r.N, m.Source.Dimension()
	if n < 1 || uint64(n) > math.MaxInt64/4/uint64(dim) {
		return inputErr("--n must be ≥ 1 and its samples fit in a file, got %d", n)
	}
	var npys, pics []string
	guard := outpath.New(r.Force)
	guard.Input(r.Ckpt, r.TrainData)
	if ckptGiven {
		guard.Input(m.Config.DataPath())
		guard.Data(m.Config.Data)
	} else {
		guard.Data(r.OracleConfig.Data)
	}
	var targets []outpath.Output
	for _, o := range r.Outs {
		picture, err := outpath.CheckSamples("out", o, uint64(n)*uint64(dim)*4+128, true)
		if err != nil {
			return asInput(err)
		}
		if picture {
			pics = append(pics, o)
		} else {
			npys = append(npys, o)
		}
		targets = append(targets, outpath.Output{Flag: "out", Path: o, Kind: outpath.KindByExt(o)})
	}
	if err := guard.CheckAll(targets...); err != nil {
		return asInput(err)
	}
	if len(pics) > 0 && uint64(n)*uint64(dim) > outpath.MaxPictureValues {
		return inputErr("--n %d: a picture needs all %d×%d values in memory (at most %d); write .npy only "+
			"(streamed, any --n), or picture a smaller --n", n, n, dim, outpath.MaxPictureValues)
	}
	spec := r.SpecFlags.Spec(r.IsSet)
	if ckptGiven {
		ImageDefaults(r.IsSet, m, &spec, w, true)
	}
	s, err := spec.Build(m.SDE, m.Score, dim)
	if err != nil {
		return asInput(err)
	}
	dev, err := r.Open(r.Device)
	if err != nil {
		return asInput(err)
	}
	each, err := s.EachOnDevice(dev, r.Device, m.Score, errw)
	if err != nil {
		return asInput(err)
	}
	start := time.Now()
	res, err := SampleFiles(m, s.Method.Name(), each, n, r.Seed, npys, pics)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d samples, sampler %s, NFE %d, %.2fs; wrote %s\n", n, s.Method.Name(), res.NFE,
		time.Since(start).Seconds(), strings.Join(r.Outs, ", "))
	sample.WarnDiverged(errw, res.Diverged, n, "a .npy keeps them as they are, a picture leaves them out")
	return nil
}
