package restore

import (
	"strings"

	"holdgo/imagedata"
	"holdgo/train"
)

// LoadStudyModels loads every --model NAME=DIR of a study (EMA weights, a forward pass's memory of
// forwardMiB MiB: train.Model.SetForwardMiB) and checks that the names are distinct and usable as
// labels (no ':' or '|') and that every model is of images of one shape. Every error is an InputError.
func LoadStudyModels(args []string, forwardMiB int) ([]StudyModel, error) {
	var out []StudyModel
	seen := map[string]bool{}
	for _, arg := range args {
		name, dir, ok := strings.Cut(arg, "=")
		if !ok || name == "" || dir == "" || strings.ContainsAny(name, ":|") {
			return nil, inputErr("experiment restore: --model %q, want NAME=DIR (a name without ':' or '|')", arg)
		}
		if seen[name] {
			return nil, inputErr("experiment restore: --model name %q given twice", name)
		}
		seen[name] = true
		m, err := train.LoadModel(dir, false, "")
		if err != nil {
			return nil, inputErr("--model %s: %v", arg, err)
		}
		shape, ok := m.Source.(*imagedata.Dataset)
		if !ok {
			return nil, inputErr("--model %s is a model of %s, not of images", arg, m.Config.Data)
		}
		if len(out) > 0 {
			s0 := out[0].Model.Source.(*imagedata.Dataset)
			if s0.C != shape.C || s0.H != shape.H || s0.W != shape.W {
				return nil, inputErr("--model %s takes %d×%d×%d images, --model %s %d×%d×%d: a study compares models of one image shape",
					arg, shape.C, shape.H, shape.W, out[0].Name, s0.C, s0.H, s0.W)
			}
		}
		if err := m.SetForwardMiB(forwardMiB); err != nil {
			return nil, &InputError{err}
		}
		out = append(out, StudyModel{Name: name, Dir: dir, SDE: m.Config.SDE, Model: m})
	}
	return out, nil
}
