// Package cliconf reads a configuration struct's field tags, so that a setting's flag name, help text
// and bounds are written once, on the field that holds it (the YAML key is the field's yaml tag):
//
//	Steps int     `yaml:"steps" flag:"steps" min:"0" help:"total optimisation steps"`
//	LR    float64 `yaml:"lr" flag:"lr" gt:"0" help:"Adam learning rate"`
//
// Fields lists the tagged fields of a struct (internal/clibind builds the command line's flags
// from them); Check enforces every field's bounds, whether the value came from a flag, a file or code.
//
// Tags: flag (the flag's name; fields without it are not settings, nested structs are walked), help
// (the flag's usage), min and max (inclusive bounds), gt and lt (exclusive bounds), note (what a special
// value means, for the refusal: "0: off"), required ("true": the command needs the flag). Bounds are
// decimal numbers (1e9, -3, 0.5); a time.Duration's are nanoseconds. A float64 setting must also be
// finite, bounded or not.
package cliconf

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
)

// Field is one tagged setting of a configuration struct.
type Field struct {
	Flag     string        // the flag's name
	Help     string        // its usage text
	Required bool          // the command needs the flag
	Value    reflect.Value // the field itself (settable through the pointer Fields was given)
	bound    bound
}

// bound is a field's allowed range: lo ≤ v ≤ hi (openLo: lo < v; openHi: v < hi), where set.
type bound struct {
	lo, hi               float64
	hasLo, hasHi         bool
	openLo, openHi       bool
	note                 string
	isDuration, isFloat  bool
	isSigned, isUnsigned bool
}

var durationType = reflect.TypeOf(time.Duration(0))

// Fields returns the tagged fields of the struct cfg points to, walking nested and embedded structs in
// order. A malformed tag (an unparsable bound, a bound on a string, an unsupported type) is a
// programming error, caught by any test that builds the flags: Fields panics on it.
func Fields(cfg any) []Field {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("cliconf: want a pointer to a struct, got %T", cfg))
	}
	var out []Field
	collect(v.Elem(), &out)
	return out
}

func collect(v reflect.Value, out *[]Field) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, ok := sf.Tag.Lookup("flag")
		if !ok {
			if sf.Type.Kind() == reflect.Struct && sf.Type != durationType && (sf.IsExported() || sf.Anonymous) {
				collect(v.Field(i), out)
			}
			continue
		}
		f := Field{Flag: name, Help: sf.Tag.Get("help"), Required: sf.Tag.Get("required") == "true", Value: v.Field(i)}
		b, err := parseBound(sf)
		if err != nil {
			panic(fmt.Sprintf("cliconf: %s.%s: %v", t.Name(), sf.Name, err))
		}
		f.bound = b
		*out = append(*out, f)
	}
}

// parseBound reads a field's bound tags and checks that its type can hold a setting.
func parseBound(sf reflect.StructField) (bound, error) {
	var b bound
	switch k := sf.Type.Kind(); {
	case sf.Type == durationType:
		b.isDuration, b.isSigned = true, true
	case k == reflect.Float64:
		b.isFloat = true
	case k == reflect.Int || k == reflect.Int64:
		b.isSigned = true
	case k == reflect.Uint64:
		b.isUnsigned = true
	case k == reflect.String, k == reflect.Bool, k == reflect.Slice && sf.Type.Elem().Kind() == reflect.String:
	default:
		return b, fmt.Errorf("unsupported type %s", sf.Type)
	}
	b.note = sf.Tag.Get("note")
	for _, tag := range []string{"min", "gt", "max", "lt"} {
		s, ok := sf.Tag.Lookup(tag)
		if !ok {
			continue
		}
		if !b.isFloat && !b.isSigned && !b.isUnsigned {
			return b, fmt.Errorf("bound %s:%q on a %s", tag, s, sf.Type)
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) {
			return b, fmt.Errorf("bound %s:%q is not a number", tag, s)
		}
		switch tag {
		case "min", "gt":
			if b.hasLo {
				return b, fmt.Errorf("both min and gt")
			}
			b.lo, b.hasLo, b.openLo = x, true, tag == "gt"
		default:
			if b.hasHi {
				return b, fmt.Errorf("both max and lt")
			}
			b.hi, b.hasHi, b.openHi = x, true, tag == "lt"
		}
	}
	return b, nil
}

// Check enforces the bound of every tagged field of the struct cfg points to (or of cfg itself, a
// struct value), the first violation as an error that names the flag, what is allowed and the value.
func Check(cfg any) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer { // a value: check a copy
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		v = p
	}
	for _, f := range Fields(v.Interface()) {
		if err := f.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Check enforces the field's bound on its current value: "--lr must be positive and finite, got NaN".
func (f Field) Check() error {
	b := f.bound
	var x float64
	var got string
	switch {
	case b.isFloat:
		x = f.Value.Float()
		got = fmt.Sprintf("%g", x)
	case b.isDuration:
		x = float64(f.Value.Int())
		got = time.Duration(f.Value.Int()).String()
	case b.isSigned:
		x = float64(f.Value.Int())
		got = strconv.FormatInt(f.Value.Int(), 10)
	case b.isUnsigned:
		x = float64(f.Value.Uint())
		got = strconv.FormatUint(f.Value.Uint(), 10)
	default:
		return nil
	}
	ok := !math.IsNaN(x) && !math.IsInf(x, 0) &&
		(!b.hasLo || x > b.lo || !b.openLo && x == b.lo) &&
		(!b.hasHi || x < b.hi || !b.openHi && x == b.hi)
	if ok {
		return nil
	}
	note := ""
	if b.note != "" {
		note = " (" + b.note + ")"
	}
	return fmt.Errorf("--%s must be %s%s, got %s", f.Flag, b.describe(), note, got)
}

// describe says what the bound allows: "in [0, 1)", "≥ 1", "positive and finite".
func (b bound) describe() string {
	lo, hi := b.format(b.lo), b.format(b.hi)
	finite := ""
	if b.isFloat {
		finite = "finite and "
	}
	switch {
	case b.hasLo && b.hasHi:
		open, close := "[", "]"
		if b.openLo {
			open = "("
		}
		if b.openHi {
			close = ")"
		}
		return "in " + open + lo + ", " + hi + close
	case b.hasLo && b.openLo && b.lo == 0 && b.isFloat:
		return "positive and finite"
	case b.hasLo && b.openLo:
		return finite + "> " + lo
	case b.hasLo:
		return finite + "≥ " + lo
	case b.hasHi && b.openHi:
		return finite + "< " + hi
	case b.hasHi:
		return finite + "≤ " + hi
	}
	return "finite"
}

// format writes a bound as the field's values are written: 1048576, 0.5, 1e+30, 1m0s.
func (b bound) format(x float64) string {
	switch {
	case b.isDuration:
		return time.Duration(x).String()
	case b.isFloat:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
