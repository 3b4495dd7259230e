package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestOneProcessUnderLauncher: sample, fid and demo started as ranks of an MPI job (the launcher's
// variables set, as mpirun -np 2 sets them) exit 2 on every rank without writing anything; rank 0
// says in one line that the command runs in one process, rank 1 says nothing. A job of one rank runs.
func TestOneProcessUnderLauncher(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	cmds := map[string][]string{
		"sample": {"sample", "--sde", "hold", "--oracle", "--n", "4", "--out", out + ".npy"},
		"fid":    {"fid", "--ref", filepath.Join(dir, "nope.npy"), "--samples", filepath.Join(dir, "nope2.npy"), "--save-stats", out + ".npz"},
		"demo":   {"demo", "--out", out},
	}
	for _, env := range []map[string]string{
		{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"},
		{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1"},
		{"PMI_SIZE": "3", "PMI_RANK": "2"},
		{"PMIX_RANK": "0"},
	} {
		for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"} {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		speaks := env["OMPI_COMM_WORLD_RANK"] == "0" || env["PMIX_RANK"] == "0"
		for name, args := range cmds {
			var stdout, stderr bytes.Buffer
			app := newApp()
			app.Writer, app.ErrWriter = &stdout, &stderr
			err := app.Run(append([]string{"holdctl"}, args...))
			var exit cli.ExitCoder
			if !errors.As(err, &exit) || exit.ExitCode() != exitBadParams {
				t.Errorf("%s under %v: %v, want exit status %d", name, env, err, exitBadParams)
				continue
			}
			msg := err.Error()
			if speaks && (!strings.Contains(msg, "holdctl "+name+": runs in one process") || strings.Contains(msg, "\n")) {
				t.Errorf("%s under %v (rank 0): message %q, want one line saying it runs in one process", name, env, msg)
			}
			if !speaks && msg != "" {
				t.Errorf("%s under %v (not rank 0): message %q, want silence", name, env, msg)
			}
			if stdout.Len()+stderr.Len() != 0 {
				t.Errorf("%s under %v: wrote %q / %q", name, env, stdout.String(), stderr.String())
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("under %v: the commands left %v", env, entries)
		}
	}
	// mpirun -np 1: one process, the command runs (here: sample with the exact score).
	for _, k := range []string{"PMI_SIZE", "PMI_RANK", "PMIX_RANK"} {
		os.Unsetenv(k)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	t.Setenv("OMPI_COMM_WORLD_RANK", "0")
	if _, code := runInProcess(t, cmds["sample"]...); code != 0 {
		t.Errorf("sample in a job of one rank: exit status %d", code)
	}
}
