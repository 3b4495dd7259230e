package serve

// holdctl serve's jobs: one runs at a time on one worker goroutine, a bounded number wait in order, and
// the results of the last few stay available to the page.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"holdgo/hold"
	"holdgo/sample"
)

// errBusy is a full queue: the request is answered 503.
var errBusy = errors.New("busy")

// Job states.
const (
	jobWaiting = "waiting"
	jobRunning = "running"
	jobDone    = "done"
	jobFailed  = "failed"
)

// job is one restoration or sampling run of the page.
type job struct {
	id    string
	kind  string // "restore" or "sample"
	total int    // network evaluations expected (the progress bar's end)
	// run does the work; its network is wrapped by counting(q.ctx, …, &evals).
	run func() (*jobResult, error)

	evals atomic.Int64 // network evaluations done

	// Under jobQueue.mu:
	state  string
	errMsg string
	result *jobResult
	ahead  int // jobs before this one when it was queued (for the position)
	seq    int // order of arrival
}

// jobResult is what a finished job shows: numbers, and PNG images by name.
type jobResult struct {
	Report any               // restore.Report or sampleReport, as JSON
	Images []string          // names in the order the page shows them
	PNG    map[string][]byte // name → PNG
}

// jobQueue runs jobs one at a time in order of arrival.
type jobQueue struct {
	maxWaiting, keep int
	log              *log.Logger
	ctx              context.Context // cancelled by close: the running job stops at its next evaluation
	cancel           context.CancelFunc
	wake             chan struct{}
	stopped          chan struct{}

	mu       sync.Mutex
	waiting  []*job
	running  *job
	jobs     map[string]*job
	finished []string // ids of finished jobs, oldest first
	started  int      // jobs started so far (the position of a waiting one is its seq − started)
	arrived  int
}

func newJobQueue(maxWaiting, keep int, logger *log.Logger) *jobQueue {
	ctx, cancel := context.WithCancel(context.Background())
	q := &jobQueue{maxWaiting: maxWaiting, keep: keep, log: logger, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), stopped: make(chan struct{}), jobs: map[string]*job{}}
	go q.work()
	return q
}

// add queues j, or returns errBusy when maxWaiting jobs wait already.
func (q *jobQueue) add(j *job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ctx.Err() != nil {
		return errors.New("the server is stopping")
	}
	if len(q.waiting) >= q.maxWaiting {
		return errBusy
	}
	j.id = newID()
	j.state = jobWaiting
	j.seq = q.arrived
	q.arrived++
	q.waiting = append(q.waiting, j)
	q.jobs[j.id] = j
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// work runs the waiting jobs one after another until close.
func (q *jobQueue) work() {
	defer close(q.stopped)
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 {
			q.mu.Unlock()
			select {
			case <-q.wake:
				continue
			case <-q.ctx.Done():
				return
			}
		}
		j := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.running, j.state = j, jobRunning
		q.started++
		q.mu.Unlock()

		start := time.Now()
		res, err := q.runOne(j)
		q.mu.Lock()
		q.running = nil
		if err != nil {
			j.state, j.errMsg = jobFailed, err.Error()
			q.log.Printf("job %s (%s) failed after %.1fs: %v", j.id, j.kind, time.Since(start).Seconds(), err)
		} else {
			j.state, j.result = jobDone, res
			q.log.Printf("job %s (%s) done in %.1fs", j.id, j.kind, time.Since(start).Seconds())
		}
		q.finished = append(q.finished, j.id)
		for len(q.finished) > q.keep {
			delete(q.jobs, q.finished[0])
			q.finished = q.finished[1:]
		}
		q.mu.Unlock()
	}
}

// runOne runs j, turning a panic into the job's error (logged with its stack): the server stays up.
func (q *jobQueue) runOne(j *job) (res *jobResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			q.log.Printf("panic in job %s (%s): %v\n%s", j.id, j.kind, r, debug.Stack())
			res, err = nil, fmt.Errorf("internal error (a bug, not your input): %v; the server is still up", r)
		}
	}()
	return j.run()
}

// close stops the queue: the running job ends at its next network evaluation, waiting ones never start.
func (q *jobQueue) close() {
	q.cancel()
	<-q.stopped
}

// jobStatus is the page's view of a job.
type jobStatus struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	State    string   `json:"state"`
	Ahead    int      `json:"ahead"` // jobs that run before this one starts (waiting only)
	Done     int64    `json:"evaluations"`
	Total    int      `json:"evaluations_expected"`
	Error    string   `json:"error,omitempty"`
	Report   any      `json:"report,omitempty"`
	Images   []string `json:"images,omitempty"`
	MaxQueue int      `json:"max_waiting"`
}

// status returns job id's status, or false when there is no such job (or it was dropped).
func (q *jobQueue) status(id string) (jobStatus, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return jobStatus{}, false
	}
	st := jobStatus{ID: j.id, Kind: j.kind, State: j.state, Done: j.evals.Load(), Total: j.total, Error: j.errMsg, MaxQueue: q.maxWaiting}
	if j.state == jobWaiting {
		st.Ahead = j.seq - q.started
		if q.running != nil {
			st.Ahead++
		}
	}
	if j.result != nil {
		st.Report, st.Images = j.result.Report, j.result.Images
	}
	return st, true
}

// image returns the PNG called name of job id's result.
func (q *jobQueue) image(id, name string) ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok || j.result == nil {
		return nil, false
	}
	b, ok := j.result.PNG[name]
	return b, ok
}

// load returns the number of jobs running and waiting.
func (q *jobQueue) load() (running bool, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running != nil, len(q.waiting)
}

// newID is a random identifier of 16 hex digits (a job's or an upload's).
func newID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// countingScorer counts the network's evaluations (the page's progress) and stops a job when its
// context ends. countingDivScorer keeps sample.DivScorer for pigdm and dps. A trained network's
// scorer has no other interface the samplers look for but sample.Forker, which only samplers with
// several workers use (the page's use one), and the device's (the page runs on the CPU).
type countingScorer struct {
	inner hold.Scorer
	ctx   context.Context
	count *atomic.Int64
}

func (s *countingScorer) Score(dst, x, t []float64) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	defer s.count.Add(1)
	return s.inner.Score(dst, x, t)
}

type countingDivScorer struct {
	countingScorer
	div sample.DivScorer
}

func (s *countingDivScorer) ScoreVJP(score, vjp, x, u, t []float64) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	defer s.count.Add(1)
	return s.div.ScoreVJP(score, vjp, x, u, t)
}

// counting wraps score so that every evaluation adds one to count.
func counting(ctx context.Context, score hold.Scorer, count *atomic.Int64) hold.Scorer {
	c := countingScorer{inner: score, ctx: ctx, count: count}
	if div, ok := score.(sample.DivScorer); ok {
		return &countingDivScorer{countingScorer: c, div: div}
	}
	return &c
}
