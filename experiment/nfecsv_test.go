package experiment

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The experiment-samplers CSV: each sampler's best grid per NFE, the floor as a flat line.
func TestReadNFECSVBestGrid(t *testing.T) {
	in := "sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\n" +
		"hold-lt,quadratic,20,19,0,0.064,0,1,0\n" +
		"hold-lt,logsnr,20,19,0,0.050,0,1,0\n" +
		"hold-lt,quadratic,50,49,0,0.011,0,1,0\n" +
		"hold-lt,logsnr,10,9,0,0.2,0,1,0\n" +
		"vp-xddim,edm,20,19,0,0.025,0,1,0\n" +
		"floor-mean,exact,0,0,0,0.0029,0,1,0\n" +
		"floor-sd,exact,0,0,0,0.002,0,0,0\n"
	series, metric, err := ReadNFECSV(strings.NewReader(in), "w1", "best")
	if err != nil {
		t.Fatal(err)
	}
	if metric != "w1" || len(series) != 3 {
		t.Fatalf("metric %q, %d series: %+v", metric, len(series), series)
	}
	lt := series[0]
	if lt.Name != "hold-lt" || !slices.Equal(lt.X, []float64{10, 20, 50}) || !slices.Equal(lt.Y, []float64{0.2, 0.050, 0.011}) {
		t.Errorf("hold-lt: %+v, want NFE 10, 20, 50 with 0.2, 0.050 (logsnr beats quadratic), 0.011", lt)
	}
	if f := series[2]; f.Name != "Monte-Carlo floor" || !slices.Equal(f.X, []float64{10, 50}) || !slices.Equal(f.Y, []float64{0.0029, 0.0029}) {
		t.Errorf("floor: %+v", f)
	}
	series, _, err = ReadNFECSV(strings.NewReader(in), "w1", "quadratic")
	if err != nil {
		t.Fatal(err)
	}
	if lt := series[0]; !slices.Equal(lt.Y, []float64{0.064, 0.011}) {
		t.Errorf("--grid quadratic: %+v, want 0.064, 0.011", lt)
	}
}

// The experiment-nfe CSV: one line per model and sampler, the metric named per row.
func TestReadNFECSVTable2(t *testing.T) {
	in := "scores,model,sampler,nfe,nfe_used,steps,metric,value\n" +
		"oracle,HOLD,LT,50,50,49,W1x1e3,9.03\n" +
		"oracle,HOLD,LT,150,150,149,W1x1e3,4.04\n" +
		"oracle,VP,EM,50,50,49,W1x1e3,4.54\n" +
		"oracle,floor-mean,exact,0,0,0,W1x1e3,1.06\n" +
		"oracle,floor-sd,exact,0,0,0,W1x1e3,0.5\n"
	series, metric, err := ReadNFECSV(strings.NewReader(in), "w1", "best")
	if err != nil {
		t.Fatal(err)
	}
	if metric != "W1x1e3" || len(series) != 3 || series[0].Name != "HOLD LT" || !slices.Equal(series[0].Y, []float64{9.03, 4.04}) ||
		series[2].Y[0] != 1.06 {
		t.Errorf("metric %q, series %+v", metric, series)
	}
}

// ReadNFECSVFile reads a file, and names it in an error of its content.
func TestReadNFECSVFile(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.csv"), filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(good, []byte("sampler,grid,nfe,w1\nhold-lt,quadratic,20,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	series, metric, err := ReadNFECSVFile(good, "w1", "best")
	if err != nil || metric != "w1" || len(series) != 1 || series[0].Y[0] != 0.5 {
		t.Errorf("%+v, %q, %v", series, metric, err)
	}
	if _, _, err := ReadNFECSVFile(bad, "w1", "best"); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("bad content: %v", err)
	}
	if _, _, err := ReadNFECSVFile(filepath.Join(dir, "none.csv"), "w1", "best"); err == nil {
		t.Error("missing file: no error")
	}
}

// A value a study never writes (negative, infinite, beyond float64) or an NFE below 1 is refused
// with the row and the value; a zero or NaN (an SD of one seed, a run that diverged) is left out,
// and named when nothing drawable remains.
func TestReadNFECSVBadValues(t *testing.T) {
	const head = "sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\n"
	for _, c := range []struct{ rows, want string }{
		{"a,quadratic,10,9,0,-0.5,0,1,1\n", "row 2: w1 -0.5: want a finite value ≥ 0"},
		{"a,quadratic,10,9,0,0.4,0,1,1\na,quadratic,20,19,0,-1e-9,0,1,1\n", "row 3: w1 -1e-9"},
		{"a,quadratic,10,9,0,+Inf,0,1,1\n", "row 2: w1 +Inf"},
		{"a,quadratic,10,9,0,-Inf,0,1,1\n", "row 2: w1 -Inf"},
		{"a,quadratic,10,9,0,1e400,0,1,1\n", "row 2: w1 1e400 is beyond float64's range"},
		{"a,quadratic,10,9,0,abc,0,1,1\n", `row 2: w1 "abc" is not a number`},
		{"floor-mean,exact,0,0,0,-0.1,0,1,0\na,quadratic,10,9,0,0.4,0,1,1\n", "row 2: w1 -0.1"},
		{"a,quadratic,-10,9,0,0.4,0,1,1\n", `row 2: nfe "-10": want a finite number of score evaluations, at least 1`},
		{"a,quadratic,1e400,9,0,0.4,0,1,1\n", `row 2: nfe "1e400"`},
		{"a,quadratic,0.5,9,0,0.4,0,1,1\n", `row 2: nfe "0.5"`},
		{"a,quadratic,10,9,0,NaN,0,1,1\na,quadratic,20,19,0,0,0,1,1\n", "no sampler with a finite positive w1 (the first value: row 2: NaN)"},
	} {
		_, _, err := ReadNFECSV(strings.NewReader(head+c.rows), "w1", "best")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.rows, err, c.want)
		}
	}
	// Zeros of a column that can be 0 (w1_sd of the floor and of one seed) are left out, not refused.
	in := head + "a,quadratic,10,9,0,0.4,0,1,1\na,quadratic,20,19,0,0.2,0.01,1,1\nfloor-mean,exact,0,0,0,0.003,0,1,0\n"
	series, _, err := ReadNFECSV(strings.NewReader(in), "w1_sd", "best")
	if err != nil || len(series) != 1 || !slices.Equal(series[0].X, []float64{20}) {
		t.Errorf("w1_sd with zeros: %+v, %v; want one line at NFE 20 and no floor", series, err)
	}
}
