package clibind

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

type settings struct {
	N     int           `flag:"n" min:"1" max:"10" help:"count"`
	Rate  float64       `flag:"rate" gt:"0" help:"rate"`
	Name  string        `flag:"name" required:"true" help:"name"`
	Wait  time.Duration `flag:"wait" help:"wait"`
	Seed  uint64        `flag:"seed" help:"seed"`
	Quiet bool          `flag:"quiet" help:"quiet"`
	Outs  []string      `flag:"out" help:"outputs"`
}

// run runs a one-command app with s's flags on args and returns the error and the settings its action saw.
func run(t *testing.T, s settings, args ...string) (settings, error) {
	t.Helper()
	var got settings
	refused := errors.New("refused")
	cmd := WithConfig(&cli.Command{Name: "c", Action: func(*cli.Context) error { got = s; return nil }},
		func(err error) error { return errors.Join(refused, err) }, &s)
	OptionalRequired(cmd.Flags)
	app := &cli.App{Name: "app", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"app", "c"}, args...))
	if err != nil && !errors.Is(err, refused) {
		t.Fatalf("%v: an error not from refused: %v", args, err)
	}
	return got, err
}

func TestWithConfigBindsAndChecks(t *testing.T) {
	def := settings{N: 3, Rate: 0.5, Outs: []string{"a.npy"}}
	got, err := run(t, def, "--n", "7", "--wait", "2s", "--seed", "9", "--quiet", "--out", "x", "--out", "y")
	if err != nil {
		t.Fatal(err)
	}
	want := settings{N: 7, Rate: 0.5, Wait: 2 * time.Second, Seed: 9, Quiet: true, Outs: []string{"x", "y"}}
	if got.N != want.N || got.Rate != want.Rate || got.Wait != want.Wait || got.Seed != want.Seed || !got.Quiet ||
		strings.Join(got.Outs, ",") != "x,y" {
		t.Errorf("bound %+v, want %+v", got, want)
	}
	if got, _ := run(t, def); got.N != 3 || strings.Join(got.Outs, ",") != "a.npy" {
		t.Errorf("defaults: got %+v", got)
	}
	for _, args := range [][]string{{"--n", "11"}, {"--n", "0"}, {"--rate", "0"}, {"--rate", "NaN"}} {
		if _, err := run(t, def, args...); err == nil || !strings.Contains(err.Error(), "--"+strings.TrimLeft(args[0], "-")) {
			t.Errorf("%v: got %v, want a refusal naming the flag", args, err)
		}
	}
}

func TestFlagsBoundAndRequired(t *testing.T) {
	var s settings
	cmd := WithConfig(&cli.Command{Name: "c", Flags: []cli.Flag{&cli.IntFlag{Name: "own"}}}, func(err error) error { return err }, &s)
	if len(cmd.Flags) != 8 || cmd.Flags[7].Names()[0] != "own" {
		t.Fatalf("flags %v: want the config's seven ahead of the command's own", cmd.Flags)
	}
	if !Bound(cmd.Flags[0]) || Bound(cmd.Flags[7]) {
		t.Error("Bound: want the config's flags and not the command's own")
	}
	if names := OptionalRequired(cmd.Flags); strings.Join(names, ",") != "name" {
		t.Errorf("OptionalRequired = %v, want [name]", names)
	}
	if f := cmd.Flags[2].(*cli.StringFlag); f.Required || !strings.HasSuffix(f.Usage, " (required)") {
		t.Errorf("--name after OptionalRequired: Required %v, usage %q", f.Required, f.Usage)
	}
	SetUsage(cmd, "out", "computed")
	if u := cmd.Flags[6].(*cli.StringSliceFlag).Usage; u != "computed" {
		t.Errorf("SetUsage: usage %q", u)
	}
}

func TestDecimalInts(t *testing.T) {
	flags := []cli.Flag{&cli.IntFlag{Name: "n", Aliases: []string{"count"}}, &cli.Uint64Flag{Name: "seed"}, &cli.StringFlag{Name: "s"}}
	for _, tc := range []struct {
		args []string
		bad  string
	}{
		{[]string{"--n", "10", "--seed=0", "--s", "010"}, ""},
		{[]string{"--n", "-3", "-seed", "+7"}, ""},
		{[]string{"--n", "010"}, "--n 010"},
		{[]string{"--count=0x10"}, "--count 0x10"},
		{[]string{"--seed", "1_000"}, "--seed 1_000"},
		{[]string{"--seed", "0b1"}, "--seed 0b1"},
		{[]string{"--", "--n", "010"}, ""},
		{[]string{"--n"}, ""},
	} {
		err := DecimalInts(flags, tc.args)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.bad != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.bad+": write the integer in decimal digits")):
			t.Errorf("%v: got %v, want a refusal of %s", tc.args, err, tc.bad)
		}
	}
}
