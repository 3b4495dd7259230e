//go:build !cuda && !cudashim

package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// runExit runs `holdctl args…` in process and returns the exit status main would give and the
// message it would print.
func runExit(args ...string) (int, string) {
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	err := app.Run(append([]string{"holdctl"}, args...))
	var exit cli.ExitCoder
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &exit):
		return exit.ExitCode(), err.Error()
	}
	return 1, err.Error()
}

// A binary without CUDA refuses --device cuda with exit status 2 and says how to get a CUDA build
// or which device to use.
func TestDeviceCUDAWithoutCUDA(t *testing.T) {
	for _, args := range [][]string{
		{"train", "--device", "cuda", "--steps", "1", "--out", t.TempDir() + "/run"},
		{"train", "--device", "cuda:1", "--steps", "1", "--out", t.TempDir() + "/run"},
		{"bench", "train", "--device", "cuda"},
		{"device", "--device", "cuda"},
		{"demo", "--device", "cuda", "--steps", "1", "--out", t.TempDir() + "/demo"},
		{"sample", "--oracle", "--device", "cuda", "--n", "2", "--out", t.TempDir() + "/x.npy"},
	} {
		code, msg := runExit(args...)
		if code != 2 || !strings.Contains(msg, "--device cpu") || !strings.Contains(msg, "-tags cuda ") || !strings.Contains(msg, "-tags cudashim") {
			t.Errorf("holdctl %s: exit %d, message %q; want exit 2 naming --device cpu and the cuda/cudashim builds", strings.Join(args, " "), code, msg)
		}
	}
	if code, msg := runExit("train", "--device", "tpu", "--steps", "1", "--out", t.TempDir()+"/run"); code != 2 || !strings.Contains(msg, "unknown device") {
		t.Errorf("--device tpu: exit %d, %q", code, msg)
	}
}
