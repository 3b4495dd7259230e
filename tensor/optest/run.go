package optest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"holdgo/rng"
	"holdgo/tensor"
)

// Case is one op of the list on one set of operands. Run builds its operands on the host from rng,
// moves them with toDev to the device under test and runs the op through the public API.
type Case struct {
	Kind tensor.OpKind
	Name string
	Run  func(rng *tensor.RNG, toDev func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor
}

// Cases returns the table: every op of tensor.Ops() has at least one case (TestTableCoversOps).
func Cases() []Case {
	m := baseCases()
	imageCases(m)
	fusedCases(m)
	var out []Case
	for _, k := range tensor.Ops() {
		for _, c := range m[k] {
			out = append(out, Case{Kind: k, Name: c.name, Run: c.run})
		}
	}
	return out
}

// Result is the outcome of one case on a device.
type Result struct {
	Case
	NMSE float64 // normalised MSE against tensor.Reference: Σ(got−want)²/Σwant²
	Err  error   // the device's error (errors.Is(Err, tensor.ErrUnsupported) for a missing kernel)
}

// Unsupported reports whether the device lacks a kernel for the case.
func (r Result) Unsupported() bool { return errors.Is(r.Err, tensor.ErrUnsupported) }

// Run runs c on dev and on tensor.Reference with the same operands and compares the results.
func Run(dev tensor.Device, c Case) Result {
	res := Result{Case: c}
	got, err := runOn(dev, c)
	if err != nil {
		res.Err = err
		return res
	}
	want, err := runOn(tensor.Reference, c)
	if err != nil {
		res.Err = fmt.Errorf("reference: %w", err)
		return res
	}
	if !tensor.SameShape(got, want) {
		res.Err = fmt.Errorf("shape %v, reference %v", got.Shape(), want.Shape())
		return res
	}
	res.NMSE, res.Err = NMSE(got.Data(), want.Data())
	return res
}

// runOn runs c with operands on dev and returns the result on the host.
func runOn(dev tensor.Device, c Case) (*tensor.Tensor, error) {
	var moveErr error
	toDev := func(x *tensor.Tensor) *tensor.Tensor {
		y, err := x.ToDevice(dev)
		if err != nil {
			moveErr = err
			return x
		}
		return y
	}
	out := c.Run(rng.New(7), toDev)
	if moveErr != nil {
		return nil, moveErr
	}
	if out.Device() != dev {
		return nil, fmt.Errorf("result on %s, want %s", out.Device().Name(), dev.Name())
	}
	return out.ToHost()
}

// NMSE is Σ(got−want)²/Σwant² (the plain sum of squares when want is all zero). A NaN or an
// infinity where the reference has none, or the other way round, is an error.
func NMSE(got, want []float32) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	var num, den float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || (math.IsInf(w, 0) || math.IsInf(g, 0)) && g != w {
			return math.Inf(1), fmt.Errorf("element %d is %v, want %v", i, g, w)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			continue
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		return num, nil
	}
	return num / den, nil
}

// T is the part of testing.TB the runner needs.
type T interface {
	Helper()
	Errorf(format string, args ...any)
}

// Check runs every case on dev and reports each one that fails, is unsupported, or differs from
// the reference by more than tol (normalised MSE); label names the configuration in messages.
func Check(t T, dev tensor.Device, label string, tol float64) {
	t.Helper()
	for _, c := range Cases() {
		r := Run(dev, c)
		switch {
		case r.Err != nil:
			t.Errorf("%s on %s (%s): %v", c.Name, dev.Name(), label, r.Err)
		case !(r.NMSE <= tol):
			t.Errorf("%s on %s (%s): normalised MSE %.3g > %.0g against the reference", c.Name, dev.Name(), label, r.NMSE, tol)
		}
	}
}

// Support is one row of the supported-ops matrix.
type Support struct {
	Kind                       tensor.OpKind
	Cases, Passed, Unsupported int
	WorstNMSE                  float64
	FirstError                 string
}

// Matrix runs every case on dev and summarises them per op kind; cases that fail or exceed tol are
// counted as neither passed nor unsupported.
func Matrix(dev tensor.Device, tol float64) []Support {
	rows := make([]Support, len(tensor.Ops()))
	for i, k := range tensor.Ops() {
		rows[i].Kind = k
	}
	for _, c := range Cases() {
		r := Run(dev, c)
		row := &rows[c.Kind]
		row.Cases++
		switch {
		case r.Unsupported():
			row.Unsupported++
		case r.Err == nil && r.NMSE <= tol:
			row.Passed++
			row.WorstNMSE = max(row.WorstNMSE, r.NMSE)
		case row.FirstError == "":
			if r.Err != nil {
				row.FirstError = fmt.Sprintf("%s: %v", c.Name, r.Err)
			} else {
				row.FirstError = fmt.Sprintf("%s: normalised MSE %.3g", c.Name, r.NMSE)
			}
		}
	}
	return rows
}

// WriteMatrix prints the matrix as a Markdown table, ops in list order.
func WriteMatrix(w io.Writer, device string, rows []Support) {
	fmt.Fprintf(w, "| op | %s | cases | worst NMSE |\n|---|---|---|---|\n", device)
	for _, r := range rows {
		status := "ok"
		switch {
		case r.Unsupported == r.Cases:
			status = "unsupported"
		case r.Passed != r.Cases:
			status = fmt.Sprintf("FAIL %d/%d (%s)", r.Cases-r.Passed, r.Cases, strings.ReplaceAll(r.FirstError, "|", "/"))
		}
		fmt.Fprintf(w, "| %v | %s | %d | %.1e |\n", r.Kind, status, r.Cases, r.WorstNMSE)
	}
}

// Missing returns the kinds among need whose cases do not all pass on the matrix's device.
func Missing(rows []Support, need []tensor.OpKind) []tensor.OpKind {
	var out []tensor.OpKind
	for _, k := range need {
		if r := rows[k]; r.Cases == 0 || r.Passed != r.Cases {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// Record runs f and returns how often it dispatched each op kind (tensor.ObserveOps).
func Record(f func()) map[tensor.OpKind]int {
	seen := map[tensor.OpKind]int{}
	stop := tensor.ObserveOps(func(op tensor.Op) { seen[op.Kind]++ })
	defer stop()
	f()
	return seen
}

// Kinds returns the keys of a Record result in op-list order.
func Kinds(rec map[tensor.OpKind]int) []tensor.OpKind {
	var out []tensor.OpKind
	for _, k := range tensor.Ops() {
		if rec[k] > 0 {
			out = append(out, k)
		}
	}
	return out
}
