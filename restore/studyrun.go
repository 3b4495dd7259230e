package restore

import (
	"encoding/json"
	"io"

	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/layers"
)

// StudyRun is holdctl experiment restore after its flags are read: what RunStudy loads, checks and
// runs.
type StudyRun struct {
	// Base holds the settings every cell shares (the numbers, --grid, --box-pos); RunStudy sets its
	// images, K and seed from Study.
	Base    Params
	Study   Study    // In, First, N, K, Seed, Prior and Version; the rest RunStudy fills in
	Models  []string // --model NAME=DIR
	Pairs   []string // --pair A:B
	Tasks   []string // NAME or NAME:σ_y
	Methods []string
	NFEs    []int
	MaxNFE  int // the largest NFE a cell may take
	// Features is the classifier checkpoint of the feature distance, class agreement and KID against
	// KIDRef's images ("": --in's data set); "" for none.
	Features, KIDRef string
	PriorN           int     // images of Study.Prior used (0: all)
	Noise            float64 // σ_y of a task given without one
	ForwardMiB       int     // a forward pass's memory (LoadStudyModels)
	Out, JSONOut     string  // the files the study's tables go to ("": standard output; none)
	Force            bool    // --force of the output guard
}

// RunStudy loads the models, checks the pairs, tasks, NFEs and outputs (the guard knows the models,
// data sets and classifier as inputs), reads KID's reference and the prior's moments, and runs the
// study (Study.Run), logging to log. Errors of the settings and inputs are InputErrors.
func RunStudy(r StudyRun, log io.Writer) (*Study, error) {
	if r.Study.In == "" || len(r.Models) == 0 {
		return nil, inputErr("experiment restore needs --model NAME=DIR (one or more) and --in IMAGES")
	}
	models, err := LoadStudyModels(r.Models, r.ForwardMiB)
	if err != nil {
		return nil, err
	}
	pairs, err := StudyPairs(r.Pairs, models)
	if err != nil {
		return nil, err
	}
	tasks, err := StudyTasks(r.Tasks, r.Methods, r.Noise)
	if err != nil {
		return nil, err
	}
	for _, n := range r.NFEs {
		if n < 2 || n > r.MaxNFE {
			return nil, inputErr("experiment restore: --nfe %d, want 2 … %d", n, r.MaxNFE)
		}
	}
	guard := outpath.New(r.Force)
	for _, m := range models {
		guard.Input(m.Dir, m.Model.Config.DataPath())
		guard.Data(m.Model.Config.Data)
	}
	guard.Input(r.Features)
	guard.Data(r.Study.In, r.KIDRef, r.Study.Prior)
	outs := []outpath.Output{{Flag: "out", Path: r.Out, Kind: outpath.Text}}
	if r.JSONOut != "" {
		if r.JSONOut == r.Out {
			return nil, inputErr("experiment restore: --json-out and --out are both %s", r.JSONOut)
		}
		outs = append(outs, outpath.Output{Flag: "json-out", Path: r.JSONOut, Kind: outpath.Text})
	}
	if err := guard.CheckAll(outs...); err != nil {
		return nil, &InputError{err}
	}
	shape := models[0].Model.Source.(*imagedata.Dataset)
	var clf *layers.Classifier
	if r.Features != "" {
		if clf, err = LoadClassifier(r.Features, shape); err != nil {
			return nil, err
		}
	}
	study := r.Study
	study.Models = models
	var kidRef []float32
	if clf != nil {
		study.KIDRef = r.KIDRef
		if study.KIDRef == "" {
			if !imagedata.IsSpec(study.In) {
				return nil, inputErr("experiment restore: --in %s is not a data set: give --kid-ref DATA for KID's reference images", study.In)
			}
			study.KIDRef = study.In
		}
		if kidRef, err = KIDReference(clf, study.KIDRef, shape, log); err != nil {
			return nil, err
		}
	}
	var mean, cov []float64
	if study.Prior != "" {
		if mean, cov, err = PriorMoments(r.PriorN, study.Prior, shape, log); err != nil {
			return nil, err
		}
	}
	base := r.Base
	base.In, base.First, base.N, base.K, base.Seed = study.In, study.First, study.N, study.K, study.Seed
	if err := study.Run(StudyConfig{Base: base, Pairs: pairs, Tasks: tasks, Methods: r.Methods,
		NFEs: r.NFEs, Classifier: clf, KIDRef: kidRef, Mean: mean, Cov: cov, Log: log}); err != nil {
		return nil, err
	}
	return &study, nil
}

// JSON writes the study to w as indented JSON (--format json, --json-out).
func (s *Study) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(s)
}
