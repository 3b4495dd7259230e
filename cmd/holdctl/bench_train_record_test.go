package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// holdctl bench train --device record runs in every build (no GPU, no cgo) and prints the recorded
// step as JSON; the other commands refuse the recording device with exit status 2, naming bench train.
func TestBenchTrainRecord(t *testing.T) {
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, io.Discard
	args := []string{"holdctl", "bench", "train", "--device", "record", "--model", "ncsnpp-tiny", "--batch", "1", "--steps", "1", "--json"}
	if err := app.Run(args); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	var j struct {
		Device string
		Step   struct {
			Launches  int   `json:"launches"`
			Bytes     int64 `json:"kernel_bytes"`
			HostSyncs int   `json:"host_syncs"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	// No host synchronisation in a non-logging step: the staged batch goes up from pinned memory.
	if j.Device != "record" || j.Step.Launches == 0 || j.Step.Bytes == 0 || j.Step.HostSyncs != 0 {
		t.Errorf("bench train --device record --json: %s", out.String())
	}
	app = newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	err := app.Run([]string{"holdctl", "train", "--device", "record", "--steps", "1", "--out", t.TempDir() + "/run"})
	var exit cli.ExitCoder
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(err.Error(), "only holdctl bench train") {
		t.Errorf("train --device record: %v", err)
	}
}

// --precision on the commands that run a network besides train (issue 44, item 4): bench train's
// strict runs the FP32 convolution kernels (the recorder names them), tf32 and bf16 their
// tensor-core ones; unknown values exit 2 naming the flag, on bench train, sample and nll, before
// anything runs.
func TestPrecisionFlag(t *testing.T) {
	for _, c := range []struct{ precision, kernel string }{{"strict", "hg_conv_fwd_f32_64"}, {"tf32", "hg_conv_fwd_tf32_64"},
		{"bf16", "hg_conv_fwd_bf16_64"}} {
		app := newApp()
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, io.Discard
		args := []string{"holdctl", "bench", "train", "--device", "record", "--model", "ncsnpp-tiny", "--batch", "1", "--steps", "1",
			"--precision", c.precision, "--json"}
		if err := app.Run(args); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		var j struct {
			Precision string
			Step      struct {
				Kernels map[string]any `json:"kernels"`
			}
		}
		if err := json.Unmarshal(out.Bytes(), &j); err != nil {
			t.Fatal(err)
		}
		if j.Precision != c.precision || j.Step.Kernels[c.kernel] == nil {
			t.Errorf("--precision %s: precision %q, kernels %v", c.precision, j.Precision, j.Step.Kernels)
		}
	}
	ckpt := "../../models/fmnist-hold3"
	for _, args := range [][]string{
		{"bench", "train", "--device", "record", "--model", "ncsnpp-tiny", "--precision", "fp16"},
		{"sample", "--ckpt", ckpt, "--n", "1", "--precision", "tf16", "--out", t.TempDir() + "/s.npy"},
		{"nll", "--ckpt", ckpt, "--precision", "fp8"},
	} {
		app := newApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		err := app.Run(append([]string{"holdctl"}, args...))
		var exit cli.ExitCoder
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(err.Error(), "precision") {
			t.Errorf("%s: %v, want exit status 2 naming --precision", strings.Join(args, " "), err)
		}
	}
}
