package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/internal/cliconf"
)

// TestValidateRejectsEveryBadNumber: each numeric key, set to NaN, ±Inf or
// just outside its range (whatever SDE or data it applies to), is refused
// with the key and the value named; the boundary values pass.
func TestValidateRejectsEveryBadNumber(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	type edit struct {
		name string
		set  func(*RunConfig)
		want string
	}
	var cases []edit
	for _, v := range []float64{nan, inf, -inf} {
		cases = append(cases,
			edit{"swiss-noise", func(c *RunConfig) { c.SwissNoise = v }, "swiss-noise"},
			edit{"L", func(c *RunConfig) { c.L = v }, "L must"},
			edit{"alpha vp", func(c *RunConfig) { c.Alpha, c.SDE = v, "vp" }, "alpha"},
			edit{"dropout", func(c *RunConfig) { c.Dropout = v }, "dropout"},
			edit{"lr", func(c *RunConfig) { c.LR = v }, "lr"},
			edit{"grad-clip", func(c *RunConfig) { c.GradClip = v }, "grad-clip"},
			edit{"ema", func(c *RunConfig) { c.EMA = v }, "ema"},
			edit{"times-log-min", func(c *RunConfig) { c.TimesLogMin, c.Times = v, TimesMixed }, "times-log-min"},
			edit{"fourier-scale", func(c *RunConfig) { c.FourierScale, c.Fourier = v, 4 }, "fourier-scale"},
		)
	}
	cases = append(cases,
		edit{"swiss-noise<0", func(c *RunConfig) { c.SwissNoise = -1e-9 }, "swiss-noise"},
		edit{"L=0", func(c *RunConfig) { c.L = 0 }, "L must"},
		edit{"alpha<0 cld", func(c *RunConfig) { c.Alpha, c.SDE = -1e-12, "cld" }, "alpha"},
		edit{"dropout=1", func(c *RunConfig) { c.Dropout = 1 }, "dropout"},
		edit{"lr=0", func(c *RunConfig) { c.LR = 0 }, "lr"},
		edit{"grad-clip<0", func(c *RunConfig) { c.GradClip = -1 }, "grad-clip"},
		edit{"ema=1", func(c *RunConfig) { c.EMA = 1 }, "ema"},
		edit{"batch=0", func(c *RunConfig) { c.Batch = 0 }, "batch"},
		edit{"batch big", func(c *RunConfig) { c.Batch = MaxBatch + 1 }, "batch"},
		edit{"hidden=0", func(c *RunConfig) { c.Hidden = 0 }, "hidden"},
		edit{"hidden big", func(c *RunConfig) { c.Hidden = MaxWidth + 1 }, "hidden"},
		edit{"layers=0", func(c *RunConfig) { c.Layers = 0 }, "layers"},
		edit{"layers big", func(c *RunConfig) { c.Layers = MaxLayers + 1 }, "layers"},
		edit{"order=5 ve", func(c *RunConfig) { c.Order, c.SDE = 5, "ve" }, "order"},
		edit{"order=0", func(c *RunConfig) { c.Order = 0 }, "order"},
		edit{"order=1 hold", func(c *RunConfig) { c.Order = 1 }, "order"},
		edit{"nf<0", func(c *RunConfig) { c.NF = -1 }, "nf"},
		edit{"nf big", func(c *RunConfig) { c.NF = MaxChannels + 1 }, "nf"},
		edit{"res-blocks<0", func(c *RunConfig) { c.ResBlocks = -1 }, "res-blocks"},
		edit{"precision fp16", func(c *RunConfig) { c.Precision = "fp16" }, `precision must be tf32, strict or bf16, got "fp16"`},
		edit{"res-blocks big", func(c *RunConfig) { c.ResBlocks = MaxResBlocks + 1 }, "res-blocks"},
		edit{"steps<0", func(c *RunConfig) { c.Steps = -1 }, "steps"},
		edit{"warmup<0", func(c *RunConfig) { c.Warmup = -1 }, "warmup"},
		edit{"times-log-min<0", func(c *RunConfig) { c.TimesLogMin, c.Times = -1e-9, TimesMixed }, "times-log-min"},
		edit{"times-log-min uniform", func(c *RunConfig) { c.TimesLogMin = 1e-3 }, "times-log-min"},
		edit{"fourier<0", func(c *RunConfig) { c.Fourier = -1 }, "fourier"},
		edit{"fourier big", func(c *RunConfig) { c.Fourier = MaxWidth + 1 }, "fourier"},
		edit{"fourier-scale<0", func(c *RunConfig) { c.FourierScale = -1 }, "fourier-scale"},
		edit{"fourier-scale big", func(c *RunConfig) { c.FourierScale = 2e4 }, "fourier-scale"},
		edit{"lr-decay", func(c *RunConfig) { c.LRDecay = "linear" }, "lr-decay"},
		edit{"estimate images", func(c *RunConfig) { c.Estimate, c.Model = true, "ncsnpp-small" }, "estimate"},
		edit{"log-time images", func(c *RunConfig) { c.LogTime, c.Model = true, "ncsnpp-small" }, "log-time"},
		edit{"ckpt-every<0", func(c *RunConfig) { c.CkptEvery = -1 }, "ckpt-every"},
		edit{"times", func(c *RunConfig) { c.Times = "sometimes" }, "times"},
		edit{"times sigma junk", func(c *RunConfig) { c.Times = "sigma:edm:junk" }, "sigma:edm:junk"},
		edit{"times sigma range", func(c *RunConfig) { c.Times = "sigma:loguniform:0,-1" }, "0 < A < B"},
		edit{"precond", func(c *RunConfig) { c.Precond = "EDM" }, "precond"},
		edit{"precond dsm", func(c *RunConfig) { c.Precond, c.Objective = PrecondEDM, "dsm" }, "precond edm needs"},
		edit{"sde", func(c *RunConfig) { c.SDE = "ou" }, "SDE"},
		edit{"objective", func(c *RunConfig) { c.Objective = "mse" }, "objective"},
		edit{"data", func(c *RunConfig) { c.Data = "" }, "data"},
		edit{"hash", func(c *RunConfig) { c.DataSHA256 = "abc" }, "data_sha256"},
	)
	for _, tc := range cases {
		c := DefaultRunConfig()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Validate() = %v, want a one-line error naming %q", tc.name, err, tc.want)
		}
		if err != nil && reflect.DeepEqual(c, DefaultRunConfig()) {
			t.Errorf("%s: the edit changed nothing", tc.name)
		}
	}
	edge := DefaultRunConfig()
	edge.SwissNoise, edge.Alpha, edge.Dropout, edge.GradClip, edge.EMA = 0, 0, 0.999, 0, 0
	edge.Batch, edge.Hidden, edge.Layers, edge.NF, edge.ResBlocks = MaxBatch, MaxWidth, MaxLayers, MaxChannels, MaxResBlocks
	if err := edge.Validate(); err != nil {
		t.Errorf("boundary values: %v", err)
	}
}

// TestMetaNeverPanics: a configuration JSON cannot hold is an error.
func TestMetaNeverPanics(t *testing.T) {
	c := DefaultRunConfig()
	c.GradClip = math.NaN()
	if _, err := c.Meta(); err == nil {
		t.Fatal("Meta of a NaN setting: no error")
	}
	c = DefaultRunConfig()
	m, err := c.Meta()
	if err != nil {
		t.Fatal(err)
	}
	var back RunConfig
	if err := json.Unmarshal([]byte(m[keyRunConfig]), &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}

func TestParseRunConfigMessages(t *testing.T) {
	base := DefaultRunConfig()
	for _, tc := range []struct{ doc, want string }{
		{"", "is empty"},
		{"  \n\t\n", "is empty"},
		{"# only a comment\n", "holds no keys"},
		{"steps: 10\n---\nsteps: 20\n", "more than one YAML document"},
		{"stepz: 10\n", "stepz"},
		{"steps: ten\n", "ten"},
	} {
		_, err := ParseRunConfig("run.yaml", []byte(tc.doc), base)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "run.yaml") ||
			strings.Contains(err.Error(), "\n") || err.Error() == "EOF" {
			t.Errorf("%q: %v, want a one-line error naming run.yaml and %q", tc.doc, err, tc.want)
		}
	}
	c, err := ParseRunConfig("run.json", []byte(`{"steps": 7, "grad_clip": 0.5}`), base)
	if err != nil || c.Steps != 7 || c.GradClip != 0.5 || c.LR != base.LR {
		t.Fatalf("JSON: %+v, %v", c, err)
	}
}

func TestDifferences(t *testing.T) {
	a := DefaultRunConfig()
	b := a
	b.Steps, b.CkptEvery, b.LR, b.Order = 5, 7, 0.5, 2
	got := a.Differences(b, "steps", "ckpt_every")
	want := []string{"order: stored 3, given 2", "lr: stored 0.001, given 0.5"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Differences = %q, want %q", got, want)
	}
	if d := a.Differences(a); len(d) != 0 {
		t.Fatalf("a config differs from itself: %q", d)
	}
}

// TestStoredDataSurvivesTheOriginal: a run on a .npy file builds from its
// copy after the original is deleted, refuses a file of other content and
// accepts a re-pointed file of the same content.
func TestStoredDataSurvivesTheOriginal(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "pts.npy")
	if err := data.WriteNPY32(orig, []float32{1, 2, 3, 4, 5, 6}, 3, 2); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	c := DefaultRunConfig()
	c.Data, c.Hidden, c.Layers = orig, 4, 2
	if err := c.StoreData(run); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, "moved.npy")
	if err := os.Rename(orig, moved); err != nil {
		t.Fatal(err)
	}
	stored := c
	stored.dataFile = "" // as read back from the checkpoint
	if err := stored.UseStoredData(run, ""); err != nil {
		t.Fatal(err)
	}
	b, err := stored.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p := b.Source.(*data.Points); p.Len() != 3 || p.Data()[5] != 6 {
		t.Fatalf("points %v", p.Data())
	}
	other := filepath.Join(dir, "other.npy")
	if err := data.WriteNPY32(other, []float32{1, 2, 3, 4, 5, 7}, 3, 2); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{other: "sha256", moved: ""} {
		s := c
		s.dataFile = ""
		if err := s.UseStoredData(run, path); err != nil {
			t.Fatal(err)
		}
		_, err := s.Build()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--train-data %s: %v", filepath.Base(path), err)
		}
	}
	if err := os.Remove(filepath.Join(run, DataFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := stored.Build(); err == nil || !strings.Contains(err.Error(), "--train-data") {
		t.Fatalf("copy deleted: %v, want advice to pass --train-data", err)
	}
}

// FuzzRunConfig: no document makes parsing, validation or encoding panic,
// and whatever validates encodes to JSON and YAML and reads back equal.
func FuzzRunConfig(f *testing.F) {
	f.Add([]byte("grad_clip: .nan\n"))
	f.Add([]byte("alpha: .inf\nsde: vp\n"))
	f.Add([]byte("dropout: -.inf\n"))
	f.Add([]byte("swiss_noise: .nan\n"))
	f.Add([]byte(""))
	f.Add([]byte("---\n"))
	f.Add([]byte(`{"steps": 10, "batch": 99999999999, "lr": 1e-3}`))
	f.Add([]byte("order: 9\nsde: hold\nL: 0\n"))
	f.Add([]byte("data: a.npy\ndata_sha256: zz\n"))
	f.Add([]byte(`{"grad_clip": 1e400, "alpha": -0}`))
	f.Add([]byte("times: sigma:loguniform:1e-300,1e300\nprecond: edm\n"))
	f.Add([]byte("times: sigma:vp\nsde: ve\n"))
	f.Add([]byte("times: sigma:edm\nsde: hold\norder: 4\nprecond: edm\nobjective: dsm\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		// The same bytes as a checkpoint's configuration metadata (JSON).
		if c, err := ConfigFromCheckpoint(&checkpoint.File{Path: "fuzz", Meta: map[string]string{keyRunConfig: string(doc)}}); err == nil && c.Validate() == nil {
			if _, err := c.Meta(); err != nil {
				t.Fatalf("valid config %+v from metadata: Meta: %v", c, err)
			}
		}
		c, err := ParseRunConfig("fuzz.yaml", doc, DefaultRunConfig())
		if err != nil || c.Validate() != nil {
			return
		}
		m, err := c.Meta()
		if err != nil {
			t.Fatalf("valid config %+v: Meta: %v", c, err)
		}
		var back RunConfig
		if err := json.Unmarshal([]byte(m[keyRunConfig]), &back); err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("JSON round trip of %+v: %+v, %v", c, back, err)
		}
		y, err := c.YAML()
		if err != nil {
			t.Fatalf("valid config %+v: YAML: %v", c, err)
		}
		again, err := ParseRunConfig("again.yaml", y, RunConfig{})
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("YAML round trip of %+v: %+v, %v", c, again, err)
		}
	})
}

// TestRunConfigTagsMatchCaps: the bounds written in RunConfig's tags are the exported caps.
func TestRunConfigTagsMatchCaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*RunConfig, int)
		cap  int
	}{
		{"hidden", func(c *RunConfig, v int) { c.Hidden = v }, MaxWidth},
		{"fourier", func(c *RunConfig, v int) { c.Fourier = v }, MaxWidth},
		{"layers", func(c *RunConfig, v int) { c.Layers = v }, MaxLayers},
		{"batch", func(c *RunConfig, v int) { c.Batch = v }, MaxBatch},
		{"nf", func(c *RunConfig, v int) { c.NF = v }, MaxChannels},
		{"res-blocks", func(c *RunConfig, v int) { c.ResBlocks = v }, MaxResBlocks},
	} {
		c := DefaultRunConfig()
		tc.set(&c, tc.cap)
		if err := cliconf.Check(&c); err != nil {
			t.Errorf("%s at its cap %d: %v", tc.name, tc.cap, err)
		}
		tc.set(&c, tc.cap+1)
		if err := cliconf.Check(&c); err == nil || !strings.Contains(err.Error(), "--"+tc.name+" ") {
			t.Errorf("%s past its cap %d: got %v", tc.name, tc.cap, err)
		}
	}
	c := DefaultRunConfig()
	c.FourierScale = MaxFourierScale
	if err := cliconf.Check(&c); err != nil {
		t.Errorf("fourier-scale at its cap: %v", err)
	}
	c.FourierScale = math.Nextafter(MaxFourierScale, math.Inf(1))
	if err := cliconf.Check(&c); err == nil {
		t.Error("fourier-scale past its cap accepted")
	}
}
