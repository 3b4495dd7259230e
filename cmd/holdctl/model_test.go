package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// runSub runs one command of holdctl through its own app (independent of
// what main.go registers) and returns its output.
func runSub(t *testing.T, cmd *cli.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "holdctl", Commands: []*cli.Command{cmd}, Writer: &out, ErrWriter: &out,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"holdctl", cmd.Name}, args...))
	return out.String(), err
}

// TestModelInfoParamCount is the acceptance count: ncsnpp-cifar10 with 9
// input channels has 107,600,771 trainable parameters (docs/ncsnpp.md#presets-and-parameter-counts).
func TestModelInfoParamCount(t *testing.T) {
	out, err := runSub(t, modelCommand(), "info", "--model", "ncsnpp-cifar10", "--in-channels", "9", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Params int `json:"params"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if r.Params != 107_600_771 {
		t.Fatalf("params %d, want 107600771", r.Params)
	}
	out, err = runSub(t, modelCommand(), "info", "--model", "ncsnpp-tiny", "--in-channels", "3", "--image-size", "8", "--batch", "2")
	if err != nil || !strings.Contains(out, "trainable parameters") || !strings.Contains(out, "MiB of activations") {
		t.Fatalf("tiny model info with --batch: %v\n%s", err, out)
	}
	if _, err := runSub(t, modelCommand(), "info", "--model", "resnet"); err == nil {
		t.Fatal("unknown model accepted")
	}
}
