package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/train"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write the shipped form of a trained run: EMA weights, configuration and image shape (OUT/ckpt.safetensors, OUT/config.yaml)",
		Description: "The exported model samples, scores (fid, nll) and plots like the run it came from, on a machine\n" +
			"without its data set, at a quarter of the size (no raw weights, no optimizer state); it cannot be\n" +
			"trained or resumed. OUT must be a new or empty directory, or an earlier export (then --force).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "run directory or checkpoint to export"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "directory to write the model into"},
			&cli.BoolFlag{Name: "force", Usage: "replace an earlier export in --out"},
		},
		Action: func(c *cli.Context) error {
			return cliError(train.RunExport(c.String("ckpt"), c.String("out"), c.Bool("force"), c.App.Writer))
		},
	}
}
