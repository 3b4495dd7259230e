package hold

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// KernelReport holds the configuration, the kernel of Kernel in order, and its JSON keeps that order;
// the text form writes a matrix a row a line.
func TestKernelReport(t *testing.T) {
	s, err := New(DefaultConfig(KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	r := s.KernelReport(0.5)
	var keys []string
	for _, f := range r {
		keys = append(keys, f.Key)
	}
	if got, want := strings.Join(keys, " "), "sde order L alpha t mean sigma chol ell"; got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	var sb strings.Builder
	if err := r.WriteJSON(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sb.String(), `{"sde":"hold","order":3,"L":2,"alpha":0.02,"t":0.5,"mean":[`) {
		t.Errorf("JSON %s", sb.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(sb.String()), &m); err != nil || m["ell"] != s.Kernel(0.5).Ell {
		t.Errorf("JSON %s: %v, want ell %v", sb.String(), err, s.Kernel(0.5).Ell)
	}
	sb.Reset()
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "sigma:\n  [") || strings.Count(sb.String(), "\n") != 6+3*3 {
		t.Errorf("text:\n%s", sb.String())
	}
}

// AStepReport refuses a step outside (0, t]; WriteJSON names the value it cannot write.
func TestAStepReportAndValueError(t *testing.T) {
	s, err := New(DefaultConfig(KindCLD))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []float64{0, -0.1, 0.6, math.NaN()} {
		if _, err := s.AStepReport(0.5, h); err == nil {
			t.Errorf("h = %v: no error", h)
		}
	}
	r, err := s.AStepReport(0.5, 0.1)
	if err != nil || len(r) != 2 || r[0].Key != "expA" || len(r[1].Value.([][]float64)) != 2 {
		t.Errorf("%v, %v", r, err)
	}
	var sb strings.Builder
	err = Report{{"t", 1.0}, {"ell", math.Inf(1)}}.WriteJSON(&sb)
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Key != "ell" || sb.Len() != 0 {
		t.Errorf("error %v, written %q", err, sb.String())
	}
}
