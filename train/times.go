package train

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"holdgo/hold"
	"holdgo/rng"
)

// Training times matched in the noise level.
//
// The SDEs of the family reach a given noise level σ of the sufficient statistic (hold.SDE.NoiseLevel)
// at very different times: HOLD-3's σ_t grows like t^2.5 at small t, so uniform or mixed times spend a
// third of its draws below σ = 0.002, where the network sees the data almost clean (docs/images.md,
// "Round 2"). TimesSigma draws σ from one distribution shared by every SDE and maps it to each SDE's
// time through the inverse t(σ) (hold.SigmaMap, float64):
//
//	sigma:edm               ln σ ~ N(−1.2, 1.2²), EDM's training distribution (Karras et al. 2022)
//	sigma:vp                the law of σ_VP(t) for t ~ U[10⁻⁵, 1] under score_sde's VP (β 0.1…20)
//	sigma:loguniform:A,B    ln σ ~ U[ln A, ln B], 0 < A < B
//
// Every distribution is truncated to the SDE's noise range [σ(t_min), σ(T)] by inverting its CDF on
// that range, so each draw still takes one uniform number of the step's time stream (bit-exact resume
// and the same draws on every rank count).

// TimesSigma is the prefix of the σ-matched time samplers: sigma:edm, sigma:vp, sigma:loguniform:A,B.
const TimesSigma = "sigma:"

// EDM's training distribution of ln σ and its noise range, the reference the report states shares in.
const (
	EDMLogSigmaMean = -1.2
	EDMLogSigmaStd  = 1.2
	EDMSigmaMin     = 0.002
	EDMSigmaMax     = 80
)

// sigmaDist is a distribution of x = ln σ given by its CDF and quantile function.
type sigmaDist struct {
	name     string
	cdf      func(x float64) float64
	quantile func(p float64) float64
}

// parseTimes checks a --times value: uniform, mixed or sigma:DIST. For sigma:DIST it returns the
// distribution.
func parseTimes(s string) (*sigmaDist, error) {
	switch s {
	case "", TimesUniform, TimesMixed:
		return nil, nil
	}
	dist, ok := strings.CutPrefix(s, TimesSigma)
	if !ok {
		return nil, fmt.Errorf("times must be %s, %s or sigma:edm|vp|loguniform:A,B, got %q", TimesUniform, TimesMixed, s)
	}
	name, args, hasArgs := strings.Cut(dist, ":")
	switch {
	case name == "edm" && !hasArgs:
		mu, sd := EDMLogSigmaMean, EDMLogSigmaStd
		return &sigmaDist{name: s,
			cdf: func(x float64) float64 { return 0.5 * math.Erfc(-(x-mu)/(sd*math.Sqrt2)) },
			quantile: func(p float64) float64 {
				if p < 0.5 {
					return mu - sd*math.Sqrt2*math.Erfcinv(2*p)
				}
				return mu + sd*math.Sqrt2*math.Erfcinv(2*(1-p))
			}}, nil
	case name == "vp" && !hasArgs:
		vp, err := hold.New(hold.DefaultConfig(hold.KindVP))
		if err != nil {
			return nil, err
		}
		m, err := vp.NewSigmaMap()
		if err != nil {
			return nil, err
		}
		t0, t1 := m.TLo, m.THi
		return &sigmaDist{name: s,
			cdf:      func(x float64) float64 { return (m.Time(math.Exp(x)) - t0) / (t1 - t0) },
			quantile: func(p float64) float64 { return math.Log(m.Sigma(t0 + p*(t1-t0))) }}, nil
	case name == "loguniform" && hasArgs:
		a, b, err := parseRange(args)
		if err != nil {
			return nil, fmt.Errorf("times %q: %w", s, err)
		}
		la, lb := math.Log(a), math.Log(b)
		return &sigmaDist{name: s,
			cdf:      func(x float64) float64 { return min(max((x-la)/(lb-la), 0), 1) },
			quantile: func(p float64) float64 { return la + p*(lb-la) }}, nil
	}
	return nil, fmt.Errorf("times %q: want sigma:edm, sigma:vp or sigma:loguniform:A,B (0 < A < B, e.g. sigma:loguniform:0.002,80)", s)
}

// parseRange reads "A,B" with 0 < A < B, both finite.
func parseRange(s string) (float64, float64, error) {
	as, bs, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("want A,B (0 < A < B), got %q", s)
	}
	a, errA := strconv.ParseFloat(strings.TrimSpace(as), 64)
	b, errB := strconv.ParseFloat(strings.TrimSpace(bs), 64)
	if errA != nil || errB != nil || !(a > 0) || !(b > a) || math.IsInf(b, 0) {
		return 0, 0, fmt.Errorf("want A,B with 0 < A < B, both finite, got %q", s)
	}
	return a, b, nil
}

// timeSampler draws a run's training times.
type timeSampler struct {
	ts   TimeSampling
	sde  *hold.SDE
	dist *sigmaDist
	m    *hold.SigmaMap
	// The SDE's noise range in ln σ and the distribution's CDF there.
	xlo, xhi, flo, fhi float64
}

func newTimeSampler(sde *hold.SDE, ts TimeSampling) (*timeSampler, error) {
	if err := ts.validate(sde); err != nil {
		return nil, err
	}
	dist, err := parseTimes(ts.Scheme)
	if err != nil {
		return nil, err
	}
	s := &timeSampler{ts: ts, sde: sde, dist: dist}
	if dist == nil {
		return s, nil
	}
	if s.m, err = sde.NewSigmaMap(); err != nil {
		return nil, err
	}
	lo, hi := s.m.Range()
	s.xlo, s.xhi = math.Log(lo), math.Log(hi)
	s.flo, s.fhi = dist.cdf(s.xlo), dist.cdf(s.xhi)
	if !(s.fhi > s.flo) {
		return nil, fmt.Errorf("times %s puts no mass on the noise levels σ ∈ [%.3g, %.3g] that %s reaches on [%g, %g]",
			dist.name, lo, hi, sde.Config().Kind, s.m.TLo, s.m.THi)
	}
	return s, nil
}

// fill sets dst to the times of samples first, first+1, … of a batch from the stream u: one uniform
// number each (element first+j of u).
func (s *timeSampler) fill(dst []float64, u rng.Stream, first int) {
	if s.dist == nil {
		sampleTimes(s.sde, s.ts, dst, u, first)
		return
	}
	for j := range dst {
		_, dst[j] = s.draw(u.Float64(uint64(first + j)))
	}
}

// draw maps one uniform number v to ln σ of the truncated distribution and its time.
func (s *timeSampler) draw(v float64) (x, t float64) {
	x = s.dist.quantile(s.flo + v*(s.fhi-s.flo))
	x = min(max(x, s.xlo), s.xhi)
	return x, s.m.Time(math.Exp(x))
}

// TimesReport describes what a time sampler does on an SDE: quantiles of log10 σ of its draws and the
// shares below, and inside, EDM's noise range.
type TimesReport struct {
	Scheme    string
	SDE       string
	Draws     int
	Probs     []float64 // the quantiles' probabilities
	Log10     []float64 // log10 σ at Probs
	BelowMin  float64   // share of draws with σ < EDMSigmaMin
	InEDM     float64   // share of draws with σ in [EDMSigmaMin, EDMSigmaMax]
	TMin, TLo float64   // the SDE's t_min, and where its σ-map starts (= TMin unless σ_t is unresolved below)
}

// String is the one line train prints.
func (r TimesReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "times %s on %s: log10 σ of the draws", r.Scheme, r.SDE)
	for i, p := range r.Probs {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %g%% %.2f", sep, 100*p, r.Log10[i])
	}
	fmt.Fprintf(&b, "; %.1f%% below σ = %g, %.1f%% in [%g, %g]", 100*r.BelowMin, EDMSigmaMin, 100*r.InEDM, EDMSigmaMin, float64(EDMSigmaMax))
	return b.String()
}

// DescribeTimes draws n training times of a scheme from a fixed stream (the training draws are the
// run's; these only describe their law) and reports their noise levels.
func DescribeTimes(sde *hold.SDE, ts TimeSampling, n int) (TimesReport, error) {
	s, err := newTimeSampler(sde, ts)
	if err != nil {
		return TimesReport{}, err
	}
	m := s.m
	if m == nil {
		if m, err = sde.NewSigmaMap(); err != nil {
			return TimesReport{}, err
		}
	}
	times := make([]float64, n)
	s.fill(times, rng.Stream{Key: 0x71ae5, ID: rng.StreamTimes}, 0)
	lg := make([]float64, n)
	r := TimesReport{Scheme: cmp.Or(ts.Scheme, TimesUniform), SDE: sdeName(sde), Draws: n, Probs: []float64{0.01, 0.1, 0.5, 0.9, 0.99},
		TMin: sde.MinTime(), TLo: m.TLo}
	for i, t := range times {
		sigma := m.Sigma(t)
		lg[i] = math.Log10(sigma)
		switch {
		case sigma < EDMSigmaMin:
			r.BelowMin++
		case sigma <= EDMSigmaMax:
			r.InEDM++
		}
	}
	r.BelowMin /= float64(n)
	r.InEDM /= float64(n)
	slices.Sort(lg)
	for _, p := range r.Probs {
		r.Log10 = append(r.Log10, lg[min(n-1, int(p*float64(n)))])
	}
	return r, nil
}

// sdeName is the SDE as the report names it: hold-3, cld, vp, ve.
func sdeName(sde *hold.SDE) string {
	c := sde.Config()
	if c.Kind == hold.KindHOLD {
		return fmt.Sprintf("hold-%d", c.Order)
	}
	return c.Kind
}

// DescribeTimesDraws is the number of draws DescribeTimes makes for a run.
const DescribeTimesDraws = 100_000

// DescribeTimes reports the run's training times (DescribeTimes on its SDE and time sampling).
func (c RunConfig) DescribeTimes() (TimesReport, error) {
	hc, err := c.SDEConfig()
	if err != nil {
		return TimesReport{}, err
	}
	sde, err := hold.New(hc)
	if err != nil {
		return TimesReport{}, err
	}
	return DescribeTimes(sde, c.TimeSampling(), DescribeTimesDraws)
}
