package restore

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/layers"
	"holdgo/train"
)

// JobRun is holdctl restore after its flags are read: what RunJob loads, checks and runs.
type JobRun struct {
	Params            // the job's settings; Outs are the files it writes
	Features   string // classifier checkpoint of the feature distance and class agreement ("": none)
	ForwardMiB int    // memory for one forward pass's activations in MiB (0: passes of ForwardBatch)
	Force      bool   // --force of the output guard
	JSON       bool   // print the report as JSON instead of its summary line
	Version    string // the program's version, in the report
}

// RunError is an error of the restoration or of writing its results, which holdctl prints as it is:
// without the "holdctl: " prefix its other run-time errors get, as before RunJob.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// runErr is err as a RunError (nil stays nil).
func runErr(err error) error {
	if err == nil {
		return nil
	}
	return &RunError{err}
}

// RunJob loads the model, prepares the job (Prepare), checks the image size and the outputs
// (Job.CheckOutputs), loads the classifier and the images, restores them, measures the restorations
// (logging to log), writes them and prints the report on w: as JSON with r.JSON, else its summary
// line. Errors of the settings and inputs are InputErrors, those of the restoration, the files written
// and w RunErrors.
func RunJob(r JobRun, w, log io.Writer) error {
	p := r.Params
	for _, f := range []struct{ flag, value string }{{"ckpt", p.Ckpt}, {"task", p.Task.Name}, {"in", p.In}} {
		if f.value == "" {
			return inputErr("restore needs --ckpt DIR (an image model), --task and --in IMAGES; --%s is missing", f.flag)
		}
	}
	m, err := train.LoadModel(p.Ckpt, p.RawWeights, "")
	if err != nil {
		return &InputError{err}
	}
	if err := m.SetForwardMiB(r.ForwardMiB); err != nil {
		return &InputError{err}
	}
	run, err := Prepare(p, m)
	if err != nil {
		return err
	}
	if run.Shape.H < SSIMMinSide || run.Shape.W < SSIMMinSide { // refused before, not after, the restoration
		return inputErr("restore: --ckpt %s is a model of %d×%d images; restore reports SSIM, whose window needs %d×%d pixels at least",
			p.Ckpt, run.Shape.H, run.Shape.W, SSIMMinSide, SSIMMinSide)
	}
	if err := run.CheckOutputs(r.Features, r.Force); err != nil {
		return err
	}
	var clf *layers.Classifier
	if r.Features != "" {
		if clf, err = LoadClassifier(r.Features, run.Shape); err != nil {
			return err
		}
	}
	if err := run.LoadImages(); err != nil {
		return err
	}
	start := time.Now()
	out, stats, err := run.Restore()
	if err != nil {
		return runErr(err)
	}
	rep, err := run.Measure(log, out, stats, clf)
	if err != nil {
		return err
	}
	rep.HoldctlVersion = r.Version
	rep.WallSeconds = time.Since(start).Seconds()
	if err := run.Write(p.Outs, out); err != nil {
		return runErr(err)
	}
	if r.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return runErr(enc.Encode(rep))
	}
	fmt.Fprintln(w, rep.Summary())
	return nil
}

// CheckOutputs checks every output (P.Outs) with the output guard before anything is computed: the
// checkpoint, its data, the images and the classifier checkpoint features are inputs; force is the
// guard's --force. The restorations must fit in the memory budget. Every error is an InputError.
func (r *Job) CheckOutputs(features string, force bool) error {
	guard := outpath.New(force)
	guard.Input(r.P.Ckpt, features)
	guard.Input(r.Model.Config.DataPath())
	guard.Data(r.Model.Config.Data)
	guard.Data(r.P.In)
	n, k, d := r.P.N, r.K, r.Task.Dim()
	if err := budget.CheckCount(int64(n)*int64(k)*int64(d)*int64(r.Model.SDE.Blocks()+2), 8, "--n"); err != nil {
		return &InputError{err}
	}
	var targets []outpath.Output
	for _, o := range r.P.Outs {
		picture, err := outpath.CheckSamples("out", o, uint64(n)*uint64(k)*uint64(d)*4+128, false)
		if err != nil {
			return &InputError{err}
		}
		if picture && uint64(n)*uint64(k+2)*uint64(d) > outpath.MaxPictureValues {
			return inputErr("--out %s: a grid of %d images × %d columns is too large a picture; write .npy only or restore fewer images", o, n, k+2)
		}
		targets = append(targets, outpath.Output{Flag: "out", Path: o, Kind: outpath.KindByExt(o)})
	}
	if err := guard.CheckAll(targets...); err != nil {
		return &InputError{err}
	}
	return nil
}
