package experiment

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"holdgo/hold"
	"holdgo/train"
)

// Table2 without models prints the oracle table, its time and the note that only it was computed;
// its CSV has a line per row and NFE and the floor's two; no table at all is just the note.
func TestTable2OracleOnly(t *testing.T) {
	set := Table2Config{NFEs: []int{20}, Seed: 1, Grid: "quadratic", Denoise: true, Workers: 1, Ends: hold.DefaultEndTimes()}
	var out bytes.Buffer
	tables, err := Table2(set, nil, true, 200, 200, 2, &out)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if len(tables) != 1 || tables[0].Scores != "oracle" || !strings.Contains(text, "| NFE 20 |") ||
		!strings.Contains(text, "s)\n\nNo checkpoints given") {
		t.Fatalf("%d tables:\n%s", len(tables), text)
	}
	var csv bytes.Buffer
	if err := WriteTable2CSV(&csv, tables); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(csv.String(), "\n"), 1+len(tables[0].Rows)+2; got != want {
		t.Errorf("%d CSV lines, want %d:\n%s", got, want, csv.String())
	}
	out.Reset()
	if tables, err := Table2(set, map[string]*train.Model{}, false, 200, 200, 2, &out); err != nil || len(tables) != 0 ||
		!strings.HasPrefix(out.String(), "No checkpoints given") {
		t.Errorf("no table: %d, %v:\n%s", len(tables), err, out.String())
	}
}

// failingWriter refuses every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// WriteTable2CSV returns the writer's error.
func TestWriteTable2CSVError(t *testing.T) {
	if err := WriteTable2CSV(failingWriter{}, nil); err == nil || err.Error() != "disk full" {
		t.Errorf("%v, want disk full", err)
	}
}
