package train

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"holdgo/internal/budget"
)

// ReadLossLog reads the step and loss columns of a run's log.csv (LogFile) (rows with a non-finite loss
// skipped). Only a regular file is read (a FIFO or /dev/zero is refused before it is opened), its size
// must fit the memory budget (a CSV line is held whole), at most that many bytes are read, and the
// columns kept are counted against the budget as they grow.
func ReadLossLog(path string) ([]float64, []float64, error) {
	f, st, err := budget.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if err := budget.Check(st.Size(), path); err != nil {
		return nil, nil, err
	}
	rows := budget.New(path)
	cr := csv.NewReader(io.LimitReader(f, st.Size()))
	cr.ReuseRecord = true
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
		return nil, nil, fmt.Errorf("%s: no step and loss columns in the header %.80q", path, strings.Join(header, ","))
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
		if len(steps)%(1<<16) == 0 { // the two columns' next 65,536 rows
			if err := rows.Take(16<<16, "the logged steps"); err != nil {
				return nil, nil, err
			}
		}
		steps, loss = append(steps, s), append(loss, l)
	}
	if len(steps) == 0 {
		return nil, nil, fmt.Errorf("%s: no logged steps", path)
	}
	return steps, loss, nil
}
