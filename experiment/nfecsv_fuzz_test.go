package experiment

import (
	"bytes"
	"testing"
)

// FuzzReadNFECSV: plot nfe's reader of a study CSV (the outside bytes of --csv) never panics, and what
// it accepts is drawable: every series has as many x as y values.
func FuzzReadNFECSV(f *testing.F) {
	f.Add([]byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\nhold-lt,quadratic,20,19,0,0.064,0,1,0\n"+
		"hold-lt,logsnr,10,9,0,0.2,0,1,0\nfloor-mean,exact,0,0,0,0.0029,0,1,0\nfloor-sd,exact,0,0,0,0.002,0,0,0\n"), "w1", "best")
	f.Add([]byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\na,quadratic,10,9,0,1e400,0,1,1\n"), "w1", "quadratic")
	f.Add([]byte("\"sampler\ngrid\",nfe,w1\nx,10,0.1\n"), "w1", "best")
	f.Add([]byte("sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\na,adaptive,0,0,1e-3,NaN,0,1,1\n"), "width_ratio", "best")
	f.Fuzz(func(t *testing.T, raw []byte, metric, grid string) {
		series, _, err := ReadNFECSV(bytes.NewReader(raw), metric, grid)
		if err != nil {
			return
		}
		for _, s := range series {
			if len(s.X) != len(s.Y) {
				t.Fatalf("series %q: %d x and %d y values", s.Name, len(s.X), len(s.Y))
			}
		}
	})
}
