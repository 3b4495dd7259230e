package main

// Commands' settings as tagged struct fields (internal/cliconf): the flag, its help, its default (the
// field's value in the struct the command starts from) and its bounds are declared once, on the
// field; withConfig makes them the command's flags and, before the command runs, copies what was
// given into the struct and enforces each bound there (cliconf.Field.Check), the one place a
// numeric flag is checked.

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/internal/cliconf"
)

// configFlags returns a flag for each tagged field of cfg (a pointer to a struct), its default the
// field's current value.
func configFlags(cfg any) []cli.Flag {
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
			panic(fmt.Sprintf("configFlags: --%s: no flag for a %s", f.Flag, v.Type()))
		}
		flags = append(flags, flag)
	}
	return flags
}

// bindFlags copies the flags set on the command line into cfg's fields (the others keep cfg's values:
// defaults, or a config file's) and checks each one's bound.
func bindFlags(c *cli.Context, cfg any) error {
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

// withConfig declares the tagged fields of each of cfgs (pointers to structs holding the defaults)
// as cmd's flags, ahead of its own, and, before cmd's action runs, fills them from the flags given,
// refusing (exit status 2) a value outside a field's bounds. The action then reads the structs.
func withConfig(cmd *cli.Command, cfgs ...any) *cli.Command {
	var flags []cli.Flag
	for _, cfg := range cfgs {
		for _, f := range configFlags(cfg) {
			boundFlags.Store(f, true)
			flags = append(flags, f)
		}
	}
	cmd.Flags = append(flags, cmd.Flags...)
	before := cmd.Before
	cmd.Before = func(c *cli.Context) error {
		for _, cfg := range cfgs {
			if err := bindFlags(c, cfg); err != nil {
				return usageErr("%v", err)
			}
		}
		if before != nil {
			return before(c)
		}
		return nil
	}
	return cmd
}

// boundFlags holds the flags withConfig made (for the test that walks every numeric flag).
var boundFlags sync.Map

// checkOnly stops every command after its flags are parsed, bound and checked, before its action
// runs (for that test: a legal value does no work).
var checkOnly bool

// setUsage gives cmd's flag name the help text usage, for a field whose help is computed (a list of
// names) and so cannot be a tag.
func setUsage(cmd *cli.Command, name, usage string) {
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
	panic("setUsage: no flag --" + name)
}
