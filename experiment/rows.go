package experiment

import "holdgo/hold"

// SamplerRow is one sampler of the studies: an SDE kind and a sample.Registry method, with the names
// the paper's Table 2 prints for it.
type SamplerRow struct {
	Model, Sampler string // as Table 2 prints them
	Kind, Method   string // hold kind and sample.Registry name
	Paper          bool   // a row of the paper's Table 2 (printed first)
	Table2         bool   // a row of experiment nfe's table (Table2Rows)
	Study          bool   // one of DefaultStudySamplers
}

// Name is the row's study sampler name, kind-method (StudyMethod).
func (r SamplerRow) Name() string { return r.Kind + "-" + r.Method }

// SamplerRows is the one table of the samplers that experiment nfe and experiment samplers run, grouped
// by kind: the paper's rows (HOLD-LT, HOLD-EM, CLD-SSCS, VP-EM, VE-PC) and, beyond the paper, the x̂₀
// exponential integrators on every SDE (docs/samplers.md). Lie–Trotter on CLD is CLD-SGM's SSCS;
// vp-xddim is DDIM, vp-xdpm2/3 are DPM-Solver++(2M/3M)-like, cld-xd* are gDDIM-style x̂₀ steps.
var SamplerRows = []SamplerRow{
	{"HOLD", "LT", hold.KindHOLD, "lt", true, true, true},
	{"HOLD", "EM", hold.KindHOLD, "em", true, true, true},
	{"HOLD", "x̂₀-DDIM", hold.KindHOLD, "xddim", false, true, true},
	{"HOLD", "x̂₀-DPM 2M", hold.KindHOLD, "xdpm2", false, true, true},
	{"HOLD", "x̂₀-DPM 3M", hold.KindHOLD, "xdpm3", false, true, true},
	{"CLD", "SSCS", hold.KindCLD, "lt", true, true, true},
	{"CLD", "EM", hold.KindCLD, "em", false, false, true},
	{"CLD", "gDDIM-style x̂₀ 2M", hold.KindCLD, "xdpm2", false, true, true},
	{"VP", "EM", hold.KindVP, "em", true, true, true},
	{"VP", "DDIM", hold.KindVP, "xddim", false, true, true},
	{"VP", "DPM-Solver++ 2M", hold.KindVP, "xdpm2", false, true, true},
	{"VP", "DPM-Solver++ 3M", hold.KindVP, "xdpm3", false, true, true},
	{"VE", "PC", hold.KindVE, "pc", true, true, false},
}

// Table2Rows are the rows of experiment nfe's table: the paper's Table 2 rows first, then the others
// of SamplerRows marked Table2, each group in table order.
var Table2Rows = table2Rows()

func table2Rows() []SamplerRow {
	var paper, more []SamplerRow
	for _, r := range SamplerRows {
		switch {
		case r.Table2 && r.Paper:
			paper = append(paper, r)
		case r.Table2:
			more = append(more, r)
		}
	}
	return append(paper, more...)
}

// DefaultStudySamplers are the samplers of SamplerRows marked Study, as "kind-method" with method a
// registry name (sample.Registry): the paper's samplers and the x̂₀ samplers for HOLD, CLD and VP.
var DefaultStudySamplers = studySamplers()

func studySamplers() []string {
	var names []string
	for _, r := range SamplerRows {
		if r.Study {
			names = append(names, r.Name())
		}
	}
	return names
}
