// Package clibind makes urfave/cli flags of the tagged settings of a configuration struct
// (internal/cliconf) and binds them back: a setting's flag, help, default (the field's value in the
// struct a command starts from) and bounds are declared once, on the field; WithConfig makes them the
// command's flags and, before the command runs, copies what was given into the struct and enforces each
// bound there (cliconf.Field.Check), the one place a numeric flag is checked. It also holds the two
// checks of raw flags that urfave/cli leaves to its user: required flags checked by the command itself
// (OptionalRequired) and integers written only in decimal (DecimalInts), and SetUp, which gives every
// command of an app those checks, its usage-error handler and the shared --max-memory.
//
// It knows nothing of a particular command: what a refused value becomes (cmd/holdctl: exit status 2)
// is the caller's function.
package clibind

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/internal/cliconf"
)

// Flags returns a flag for each tagged field of cfg (a pointer to a struct), its default the field's
// current value.
func Flags(cfg any) []cli.Flag {
	var flags []cli.Flag
	for _, f := range cliconf.Fields(cfg) {
		v := f.Value
		var flag cli.Flag
		switch {
		case v.Type() == reflect.TypeOf(time.Duration(0)):
			flag = &cli.DurationFlag{Name: f.Flag, Usage: f.Help, Value: time.Duration(v.Int())}
		case v.Kind() == reflect.String:
			flag = &cli.StringFlag{Name: f.Flag, Usage: f.Help, Value: v.String(), Required: f.Required}
		case v.Kind() == reflect.Bool:
			flag = &cli.BoolFlag{Name: f.Flag, Usage: f.Help, Value: v.Bool()}
		case v.Kind() == reflect.Int:
			flag = &cli.IntFlag{Name: f.Flag, Usage: f.Help, Value: int(v.Int())}
		case v.Kind() == reflect.Int64:
			flag = &cli.Int64Flag{Name: f.Flag, Usage: f.Help, Value: v.Int()}
		case v.Kind() == reflect.Uint64:
			flag = &cli.Uint64Flag{Name: f.Flag, Usage: f.Help, Value: v.Uint()}
		case v.Kind() == reflect.Float64:
			flag = &cli.Float64Flag{Name: f.Flag, Usage: f.Help, Value: v.Float()}
		case v.Kind() == reflect.Slice:
			var def *cli.StringSlice
			if v.Len() > 0 {
				def = cli.NewStringSlice(v.Interface().([]string)...)
			}
			flag = &cli.StringSliceFlag{Name: f.Flag, Usage: f.Help, Value: def, Required: f.Required}
		default:
			panic(fmt.Sprintf("clibind.Flags: --%s: no flag for a %s", f.Flag, v.Type()))
		}
		flags = append(flags, flag)
	}
	return flags
}

// Bind copies the flags set on the command line into cfg's fields (the others keep cfg's values:
// defaults, or a config file's) and checks each one's bound.
func Bind(c *cli.Context, cfg any) error {
	for _, f := range cliconf.Fields(cfg) {
		if !c.IsSet(f.Flag) {
			continue
		}
		v := f.Value
		switch {
		case v.Type() == reflect.TypeOf(time.Duration(0)):
			v.SetInt(int64(c.Duration(f.Flag)))
		case v.Kind() == reflect.String:
			v.SetString(c.String(f.Flag))
		case v.Kind() == reflect.Bool:
			v.SetBool(c.Bool(f.Flag))
		case v.Kind() == reflect.Int:
			v.SetInt(int64(c.Int(f.Flag)))
		case v.Kind() == reflect.Int64:
			v.SetInt(c.Int64(f.Flag))
		case v.Kind() == reflect.Uint64:
			v.SetUint(c.Uint64(f.Flag))
		case v.Kind() == reflect.Float64:
			v.SetFloat(c.Float64(f.Flag))
		case v.Kind() == reflect.Slice:
			v.Set(reflect.ValueOf(append([]string(nil), c.StringSlice(f.Flag)...)))
		}
		if err := f.Check(); err != nil {
			return err
		}
	}
	return nil
}

// WithConfig declares the tagged fields of each of cfgs (pointers to structs holding the defaults)
// as cmd's flags, ahead of its own, and, before cmd's action runs, fills them from the flags given,
// returning refused(err) for a value outside a field's bounds. The action then reads the structs.
func WithConfig(cmd *cli.Command, refused func(error) error, cfgs ...any) *cli.Command {
	var flags []cli.Flag
	for _, cfg := range cfgs {
		for _, f := range Flags(cfg) {
			bound.Store(f, true)
			flags = append(flags, f)
		}
	}
	cmd.Flags = append(flags, cmd.Flags...)
	before := cmd.Before
	cmd.Before = func(c *cli.Context) error {
		for _, cfg := range cfgs {
			if err := Bind(c, cfg); err != nil {
				return refused(err)
			}
		}
		if before != nil {
			return before(c)
		}
		return nil
	}
	return cmd
}

// bound holds the flags WithConfig made.
var bound sync.Map

// Bound reports whether WithConfig made flag f (for a test that walks every numeric flag of a
// command: one declared outside a config struct has no bounds).
func Bound(f cli.Flag) bool {
	_, ok := bound.Load(f)
	return ok
}

// SetUsage gives cmd's flag name the help text usage, for a field whose help is computed (a list of
// names) and so cannot be a tag.
func SetUsage(cmd *cli.Command, name, usage string) {
	for _, f := range cmd.Flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Name == name {
				f.Usage = usage
				return
			}
		case *cli.StringSliceFlag:
			if f.Name == name {
				f.Usage = usage
				return
			}
		}
	}
	panic("clibind.SetUsage: no flag --" + name)
}

// OptionalRequired turns the flags marked Required into optional ones and returns their names, which
// the command's action then checks itself: urfave/cli's own check ends with exit status 1 and a message
// of its own, where a missing flag is bad input.
func OptionalRequired(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Required {
				f.Required, f.Usage = false, f.Usage+" (required)"
				names = append(names, f.Name)
			}
		case *cli.StringSliceFlag:
			if f.Required {
				f.Required, f.Usage = false, f.Usage+" (required)"
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// DecimalInts refuses an integer flag of flags written other than in decimal digits (010, 0x10, 0o7,
// 0b1, 1_000) anywhere in args: Go's flag package reads such a value with its base prefix, so --n 010
// drew 8 samples and --seed 0x10 used seed 16.
func DecimalInts(flags []cli.Flag, args []string) error {
	ints := map[string]bool{}
	for _, f := range flags {
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			for _, n := range f.Names() {
				ints[n] = true
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ints[name] {
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				break
			}
			i++
			v = args[i]
		}
		if !isDecimal(v) {
			return fmt.Errorf("--%s %s: write the integer in decimal digits (a leading 0, 0x, 0o, 0b or _ is not read as decimal)", name, v)
		}
	}
	return nil
}

// isDecimal reports whether v is an optional sign and decimal digits without a leading zero (or "0").
func isDecimal(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+")
	switch {
	case v == "":
		return true // the flag parser refuses it, naming it
	case v[0] == '0' && len(v) > 1:
		return false
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
