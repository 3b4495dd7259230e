package train

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// ReadLossLog reads the step and loss columns of a run's log.csv (LogFile) (rows with a non-finite loss skipped).
func ReadLossLog(path string) ([]float64, []float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	cr := csv.NewReader(io.LimitReader(f, 1<<30))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: no header: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	si, ok1 := col["step"]
	li, ok2 := col["loss"]
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("%s: no step and loss columns in %v", path, header)
	}
	var steps, loss []float64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, err)
		}
		if len(rec) <= max(si, li) {
			continue
		}
		s, err1 := strconv.ParseFloat(rec[si], 64)
		l, err2 := strconv.ParseFloat(rec[li], 64)
		if err1 != nil || err2 != nil || math.IsNaN(l) || math.IsInf(l, 0) {
			continue
		}
		steps, loss = append(steps, s), append(loss, l)
	}
	if len(steps) == 0 {
		return nil, nil, fmt.Errorf("%s: no logged steps", path)
	}
	return steps, loss, nil
}
