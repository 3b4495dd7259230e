package checkpoint

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Metadata conventions. Safetensors metadata is a flat map of strings;
// structured values are stored as one JSON document per key.
const (
	// KeyConfig holds the model/SDE/training configuration as JSON
	// (SetJSON / GetJSON).
	KeyConfig = "config"
	// KeyStep holds the training step as a decimal integer (SetStep / Step).
	KeyStep = "step"
)

// SetJSON stores v, encoded as JSON, in meta[key].
func SetJSON(meta map[string]string, key string, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("checkpoint: metadata %q: %w: %v", key, ErrInvalid, err)
	}
	meta[key] = string(js)
	return nil
}

// GetJSON decodes the JSON in metadata key into v. Fields in the JSON that
// v lacks are ignored, and fields v has that the JSON lacks keep their
// values, so a config struct can gain fields without breaking old files.
func (f *File) GetJSON(key string, v any) error {
	js, ok := f.Meta[key]
	if !ok {
		return fmt.Errorf("checkpoint %s: metadata %q: %w", f.Path, key, ErrMissing)
	}
	if err := json.Unmarshal([]byte(js), v); err != nil {
		return fmt.Errorf("checkpoint %s: metadata %q: %w: %v", f.Path, key, ErrCorruptHeader, err)
	}
	return nil
}

// SetStep stores the training step in meta[KeyStep].
func SetStep(meta map[string]string, step int64) {
	meta[KeyStep] = strconv.FormatInt(step, 10)
}

// Step returns the training step stored under KeyStep.
func (f *File) Step() (int64, error) {
	s, ok := f.Meta[KeyStep]
	if !ok {
		return 0, fmt.Errorf("checkpoint %s: metadata %q: %w", f.Path, KeyStep, ErrMissing)
	}
	step, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("checkpoint %s: metadata %q: %w: %q is not an integer", f.Path, KeyStep, ErrCorruptHeader, s)
	}
	if step < 0 {
		return 0, fmt.Errorf("checkpoint %s: metadata %q: %w: a negative step %d", f.Path, KeyStep, ErrCorruptHeader, step)
	}
	return step, nil
}
