package outpath

import (
	"os"
	"path/filepath"
	"strings"

	"holdgo/imagedata"
)

// Data records the data sets a command reads as its inputs. An image folder (images:DIR, or a plain
// folder path) is a whole tree no output may enter, since a new image there joins the data set
// (InputTree); the files of an IDX or CIFAR-10 directory are inputs one by one (a new file beside them
// changes nothing); a trained run or export, an archive or a file is a plain input. An empty spec is
// none.
func (g *Guard) Data(specs ...string) {
	for _, s := range specs {
		path := imagedata.SpecPath(s)
		st, err := os.Stat(path)
		switch {
		case s == "":
		case err != nil || !st.IsDir():
			g.Input(path)
		case strings.HasPrefix(s, "images:") || !imagedata.IsSpec(s) && !IsRunDir(path) && !hasCheckpoint(path):
			g.InputTree(path)
		default:
			g.Input(path)
			if entries, err := os.ReadDir(path); err == nil && imagedata.IsSpec(s) {
				for _, e := range entries {
					g.Input(filepath.Join(path, e.Name()))
				}
			}
		}
	}
}

// hasCheckpoint reports whether dir holds a checkpoint (a run's or an export's).
func hasCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "ckpt.safetensors"))
	return err == nil
}
