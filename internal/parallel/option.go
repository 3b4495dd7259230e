package parallel

// ThreadsOption is --threads of the commands that run the worker pool, a tagged setting
// (internal/cliconf) to embed in a command's configuration struct.
type ThreadsOption struct {
	Threads int `flag:"threads" min:"0" max:"256" note:"0: all cores" help:"worker threads (default: all cores)"` // each thread is a persistent worker goroutine
}

// Apply sets the worker pool's size (0: all cores).
func (t ThreadsOption) Apply() { SetThreads(t.Threads) }
