package experiment

import (
	"fmt"
	"io"
	"strings"

	"holdgo/hold"
	"holdgo/internal/outpath"
)

// FigureRun is what holdctl plot flow, blocks and moments share after their flags are read: the
// figure's file and the paths' seed.
type FigureRun struct {
	Out   string // the .png written
	Force bool   // --force of the output guard
	Seed  uint64
}

// FlowRun is holdctl plot flow after its flags are read.
type FlowRun struct {
	FigureRun
	SDEs  []string // the panels: vp, cld, hold
	Paths int      // ODE paths per panel
	Tol   float64  // rtol = atol of the ODE paths
}

// RunFlow checks the figure's file and the SDEs, writes Figure 1 (FlowFigure) and says so on w.
// Errors of the settings are InputErrors.
func RunFlow(r FlowRun, w io.Writer) error {
	if err := outpath.CheckFigure(r.Force, "out", r.Out); err != nil {
		return &InputError{err}
	}
	for _, k := range r.SDEs {
		if k != hold.KindVP && k != hold.KindCLD && k != hold.KindHOLD {
			return inputErr("plot flow: unknown --sdes value %q (want vp, cld or hold)", k)
		}
	}
	if len(r.SDEs) == 0 {
		return inputErr("plot flow: want at least one SDE (--sdes)")
	}
	if err := FlowFigure(r.Out, r.SDEs, r.Paths, r.Tol, r.Seed); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (%s; exact oracle score of the paper's 1-D mixture)\n", r.Out, strings.Join(r.SDEs, ", "))
	return nil
}

// BlocksRun is holdctl plot blocks after its flags are read.
type BlocksRun struct {
	FigureRun
	Sampler      string // the sampler method ("ode": the probability-flow ODE)
	Steps, Order int    // steps of fixed-step samplers; HOLD's order
	Paths        int    // paths per panel
}

// RunBlocks checks the figure's file and the sampler, writes Figure 4 (BlocksFigure) and says so on w.
// Errors of the settings are InputErrors.
func RunBlocks(r BlocksRun, w io.Writer) error {
	if err := outpath.CheckFigure(r.Force, "out", r.Out); err != nil {
		return &InputError{err}
	}
	m, spec, err := BlocksModel(r.Sampler, r.Steps, r.Order)
	if err != nil {
		return inputErr("plot blocks: %v", err)
	}
	if err := BlocksFigure(r.Out, m, spec, r.Paths, r.Seed); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (HOLD-%d, %s sampler; exact oracle score of the paper's 1-D mixture)\n", r.Out, m.SDE.Blocks(), spec.Method)
	return nil
}

// MomentsRun is holdctl plot moments after its flags are read.
type MomentsRun struct {
	FigureRun
	CLD, HOLD string // the rows' checkpoints ("": the oracle)
	Grid      string
	Steps, N  int // sampler steps; samples
}

// RunMoments checks the figure's file (the checkpoints are its inputs) and the rows (MomentsRows),
// writes Figure 5 (MomentsFigure) and says so on w. Errors of the settings are InputErrors.
func RunMoments(r MomentsRun, w io.Writer) error {
	if err := outpath.CheckFigure(r.Force, "out", r.Out, r.CLD, r.HOLD); err != nil {
		return &InputError{err}
	}
	rows, err := MomentsRows(r.CLD, r.HOLD, r.Steps, r.Grid)
	if err != nil {
		return inputErr("plot moments: %v", err)
	}
	if err := MomentsFigure(r.Out, rows, r.Steps, r.N, r.Grid, r.Seed); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (CLD: %s, HOLD: %s)\n", r.Out, rows[0].Label, rows[1].Label)
	return nil
}
