package outpath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxPictureValues bounds the samples a picture (.png) holds in memory: 2²⁷ values, 512 MiB of float32.
const MaxPictureValues = 1 << 27

// DirExists reports an output path whose directory is missing or is no directory.
func DirExists(path string) error {
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", filepath.Dir(path))
	}
	return nil
}

// CheckSamples checks, before anything is computed, one output of --flag that holds samples: an array
// (.npy) of npyBytes bytes or a picture (.png), as holdctl sample and restore write them. It refuses
// another extension, a missing directory, with fileOnly an existing directory or other non-file (named
// as such, before the space is asked), and an array its file system has no room for; it returns
// whether path is a picture. The errors name the flag and are input errors; the guard's own checks
// (Guard.CheckAll) come after.
func CheckSamples(flag, path string, npyBytes uint64, fileOnly bool) (picture bool, err error) {
	ext := filepath.Ext(path)
	if ext != ".npy" && ext != ".png" {
		return false, fmt.Errorf("--%s %s: want a .npy or .png file", flag, path)
	}
	if err := DirExists(path); err != nil {
		return false, fmt.Errorf("--%s %s: %v", flag, path, err)
	}
	if st, err := os.Stat(path); fileOnly && err == nil && !st.Mode().IsRegular() {
		return false, fmt.Errorf("--%s %s is a directory or another non-file; give a file name ending .npy or .png", flag, path)
	}
	if ext == ".png" {
		return true, nil
	}
	if err := CheckSpace(path, npyBytes); err != nil {
		return false, fmt.Errorf("--%s: %v", flag, strings.TrimPrefix(err.Error(), ErrRefused.Error()+": "))
	}
	return false, nil
}

// CheckPicture checks, before anything is computed, an output of --flag that is a picture (a figure):
// its extension (.png), its directory, and that it is no directory. The errors name the flag and are
// input errors; the guard's own checks come after.
func CheckPicture(flag, path string) error {
	if filepath.Ext(path) != ".png" {
		return fmt.Errorf("--%s %s: want a .png file", flag, path)
	}
	if err := DirExists(path); err != nil {
		return fmt.Errorf("--%s %s: %v", flag, path, err)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--%s %s is a directory", flag, path)
	}
	return nil
}

// CheckFigure checks, before any work is done, a figure that --flag writes at path: CheckPicture, then
// the guard's checks of a PNG (no input of the command, no run's file, or with force another kind of
// file replaced). Every error is an input error.
func CheckFigure(force bool, flag, path string, inputs ...string) error {
	if err := CheckPicture(flag, path); err != nil {
		return err
	}
	g := New(force)
	g.Input(inputs...)
	return g.CheckAll(Output{Flag: flag, Path: path, Kind: PNG})
}
