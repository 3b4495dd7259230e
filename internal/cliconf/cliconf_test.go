package cliconf

import (
	"math"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Rate float64 `flag:"rate" lt:"1" min:"0" help:"a rate"`
}

type config struct {
	Steps   int           `yaml:"steps" flag:"steps" min:"1" max:"1e9" help:"total steps"`
	LR      float64       `flag:"lr" gt:"0" help:"learning rate"`
	Clip    float64       `flag:"clip" min:"0" note:"0: off"`
	Any     float64       `flag:"any"`
	Seed    uint64        `flag:"seed" max:"100"`
	Wait    time.Duration `flag:"wait" min:"0"`
	Name    string        `flag:"name" required:"true" help:"a name"`
	Outs    []string      `flag:"out"`
	Quiet   bool          `flag:"quiet"`
	Skipped int           // no flag tag: not a setting
	inner
}

func TestFields(t *testing.T) {
	c := config{Steps: 3}
	fs := Fields(&c)
	var names []string
	for _, f := range fs {
		names = append(names, f.Flag)
	}
	if got, want := strings.Join(names, " "), "steps lr clip any seed wait name out quiet rate"; got != want {
		t.Fatalf("flags %q, want %q", got, want)
	}
	if fs[0].Help != "total steps" || !fs[6].Required || fs[0].Required {
		t.Fatalf("help or required not read: %+v", fs)
	}
	fs[0].Value.SetInt(7) // the fields are the struct's own
	fs[9].Value.SetFloat(0.25)
	if c.Steps != 7 || c.Rate != 0.25 {
		t.Fatalf("setting through Fields did not reach the struct: %+v", c)
	}
}

func TestCheck(t *testing.T) {
	ok := config{Steps: 1, LR: 1e-3, Seed: 100, inner: inner{Rate: 0.5}}
	if err := Check(&ok); err != nil {
		t.Fatal(err)
	}
	if err := Check(ok); err != nil { // a value works too
		t.Fatal(err)
	}
	cases := []struct {
		edit func(*config)
		want string
	}{
		{func(c *config) { c.Steps = 0 }, "--steps must be in [1, 1000000000], got 0"},
		{func(c *config) { c.Steps = 1_000_000_001 }, "--steps must be in [1, 1000000000], got 1000000001"},
		{func(c *config) { c.LR = 0 }, "--lr must be positive and finite, got 0"},
		{func(c *config) { c.LR = math.NaN() }, "--lr must be positive and finite, got NaN"},
		{func(c *config) { c.LR = math.Inf(1) }, "--lr must be positive and finite, got +Inf"},
		{func(c *config) { c.Clip = -1 }, "--clip must be finite and ≥ 0 (0: off), got -1"},
		{func(c *config) { c.Any = math.Inf(-1) }, "--any must be finite, got -Inf"},
		{func(c *config) { c.Seed = 101 }, "--seed must be ≤ 100, got 101"},
		{func(c *config) { c.Wait = -time.Second }, "--wait must be ≥ 0s, got -1s"},
		{func(c *config) { c.Rate = 1 }, "--rate must be in [0, 1), got 1"},
		{func(c *config) { c.Rate = math.NaN() }, "--rate must be in [0, 1), got NaN"},
	}
	for _, tc := range cases {
		c := ok
		tc.edit(&c)
		err := Check(&c)
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestMalformedTagsPanic(t *testing.T) {
	for name, cfg := range map[string]any{
		"bound on a string": &struct {
			S string `flag:"s" min:"1"`
		}{},
		"unparsable bound": &struct {
			N int `flag:"n" max:"lots"`
		}{},
		"min and gt": &struct {
			N int `flag:"n" min:"1" gt:"0"`
		}{},
		"unsupported type": &struct {
			M map[string]int `flag:"m"`
		}{},
		"not a pointer": struct{}{},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			Fields(cfg)
		}()
	}
}
