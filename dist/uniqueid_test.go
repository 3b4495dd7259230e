package dist

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// exchangeOn runs ExchangeID on size in-process ranks.
func exchangeOn(t *testing.T, size, n int, newID func() ([]byte, error)) ([][]byte, []error) {
	t.Helper()
	comms, err := NewLocal(size)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([][]byte, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[r], errs[r] = ExchangeID(comms[r], n, newID)
		}()
	}
	wg.Wait()
	return ids, errs
}

// TestExchangeID: rank 0 alone makes the 128-byte id (as ncclGetUniqueId) and
// every rank gets its bytes, on 1 (Single and local), 2 and 3 ranks.
func TestExchangeID(t *testing.T) {
	want := make([]byte, 128)
	for i := range want {
		want[i] = byte(255 - i)
	}
	var calls atomic.Int32
	newID := func() ([]byte, error) { calls.Add(1); return bytes.Clone(want), nil }
	if id, err := ExchangeID(Single{}, 128, newID); err != nil || !bytes.Equal(id, want) {
		t.Errorf("Single: %x, %v", id, err)
	}
	for _, size := range []int{1, 2, 3} {
		calls.Store(0)
		ids, errs := exchangeOn(t, size, 128, newID)
		for r := range size {
			if errs[r] != nil || !bytes.Equal(ids[r], want) {
				t.Errorf("rank %d of %d: %x, %v", r, size, ids[r], errs[r])
			}
		}
		if calls.Load() != 1 {
			t.Errorf("%d ranks: the id was made %d times, want once (rank 0)", size, calls.Load())
		}
	}
}

// TestExchangeIDFailure: rank 0's failure to make the id (or an id of the
// wrong length) is an error on every rank, not a hang.
func TestExchangeIDFailure(t *testing.T) {
	boom := errors.New("ncclGetUniqueId: unhandled system error")
	for _, c := range []struct {
		newID func() ([]byte, error)
		err   string
	}{
		{func() ([]byte, error) { return nil, boom }, "unhandled system error"},
		{func() ([]byte, error) { return make([]byte, 64), nil }, "has 64 bytes, want 128"},
	} {
		_, errs := exchangeOn(t, 3, 128, c.newID)
		if errs[0] == nil || !strings.Contains(errs[0].Error(), c.err) {
			t.Errorf("rank 0: %v, want an error with %q", errs[0], c.err)
		}
		for r := 1; r < 3; r++ {
			if !errors.Is(errs[r], ErrPeer) || !strings.Contains(errs[r].Error(), "rank 0 could not make the unique id") {
				t.Errorf("rank %d: %v, want ErrPeer from rank 0", r, errs[r])
			}
		}
	}
	if _, err := ExchangeID(Single{}, 0, nil); err == nil {
		t.Error("an id of 0 bytes: no error")
	}
}
