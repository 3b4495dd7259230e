package train

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/internal/budget"
)

// Files of a run directory (holdctl train writes them; DataFile is the copy of .npy points).
const (
	CheckpointFile = "ckpt.safetensors"
	ConfigFile     = "config.yaml"
	LogFile        = "log.csv"
)

// Model is what sampling needs: the SDE, a score and the data it models, with the run configuration
// that describes them.
type Model struct {
	Config RunConfig
	SDE    *hold.SDE
	Score  hold.Scorer
	Source data.Source
}

// CheckpointPath accepts a run directory or a checkpoint file and returns the checkpoint file.
func CheckpointPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, CheckpointFile)
	}
	return p
}

// LoadModel rebuilds a trained model from its checkpoint (a run directory or the file; EMA weights
// unless raw), reading the training points of a run on a .npy file from trainData if given, else
// from the run directory's copy (never from the path the run was started with).
func LoadModel(path string, raw bool, trainData string) (*Model, error) {
	f, err := checkpoint.Load(CheckpointPath(path))
	if err != nil {
		return nil, err
	}
	if raw && f.Meta[KeyExported] != "" {
		return nil, fmt.Errorf("checkpoint %s is an exported model: it holds the EMA weights only (drop --raw-weights)", f.Path)
	}
	cfg, err := ConfigFromCheckpoint(f)
	if err != nil {
		return nil, err
	}
	if err := CheckConfigFile(f.Path, cfg); err != nil {
		return nil, err
	}
	if err := cfg.UseStoredData(filepath.Dir(f.Path), trainData); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", f.Path, err)
	}
	built, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", f.Path, err)
	}
	if err := LoadWeights(f, built.Net.Parameters(), !raw); err != nil {
		return nil, err
	}
	// Sampling never changes the weights: the convolutions keep their transformed weights.
	built.Net.Parameters().Freeze()
	return &Model{Config: cfg, SDE: built.SDE, Score: &NetworkScorer{SDE: built.SDE, Net: built.Net, EDM: cfg.Precond == PrecondEDM}, Source: built.Source}, nil
}

// CheckConfigFile compares the config.yaml beside a checkpoint (a run's or an export's) with the
// configuration stored inside the checkpoint, which is the one holdctl uses: an edited or copied
// config.yaml would describe a model other than the one sampled or resumed, so a difference in any
// key but those a resume changes (steps, ckpt_every, ranks) is refused, naming the keys. A checkpoint
// without a config.yaml beside it is fine.
func CheckConfigFile(ckptPath string, stored RunConfig) error {
	path := filepath.Join(filepath.Dir(ckptPath), ConfigFile)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	raw, err := budget.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	onFile, err := ParseRunConfig(path, raw, RunConfig{})
	if err != nil {
		return fmt.Errorf("%v; the checkpoint %s holds the run's configuration: restore %s from it or remove the file", err, ckptPath, ConfigFile)
	}
	if diff := stored.Differences(onFile, "steps", "ckpt_every", "ranks"); len(diff) > 0 {
		return fmt.Errorf("%s contradicts the checkpoint beside it (%s; \"given\" is the file's): holdctl uses the checkpoint's; restore the file or remove it",
			path, strings.Join(diff, "; "))
	}
	return nil
}

// SetForwardMemory gives a trained model's network scorer a memory budget for one forward pass in
// bytes (NetworkScorer.MemoryBudget; 0 keeps passes of DefaultForwardBatch samples); an exact score
// (OracleModel) has no network and ignores it.
func (m *Model) SetForwardMemory(bytes int64) {
	if ns, ok := m.Score.(*NetworkScorer); ok {
		ns.MemoryBudget = bytes
	}
}

// SetForwardMiB is SetForwardMemory of mib MiB, refused above the memory budget (internal/budget:
// holdctl's --max-memory, known only when a command runs). Its error names the flag --forward-mib.
func (m *Model) SetForwardMiB(mib int) error {
	if limit := budget.Limit() >> 20; int64(mib) > limit {
		return fmt.Errorf("--forward-mib must be in [0, %d] (the memory budget, --max-memory), got %d", limit, mib)
	}
	m.SetForwardMemory(int64(mib) << 20)
	return nil
}

// LoadModelOf loads a checkpoint (EMA weights) and checks that it is of SDE kind; errors name the
// flag --kind.
func LoadModelOf(kind, ckpt string) (*Model, error) {
	m, err := LoadModel(ckpt, false, "")
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", kind, err)
	}
	if m.Config.SDE != kind {
		return nil, fmt.Errorf("--%s %s holds a %s model, not %s", kind, ckpt, m.Config.SDE, kind)
	}
	return m, nil
}

// OracleModel is the exact score of mixture data under the SDE of cfg, or for image data the
// empirical distribution of its first oracleN images.
func OracleModel(cfg RunConfig, oracleN int) (*Model, error) {
	if err := cfg.Validate(); err != nil { // every setting, also those the SDE ignores (α of VP)
		return nil, err
	}
	var (
		src  data.Source
		hmix hold.Mixture
	)
	if imagedata.IsSpec(cfg.Data) { // the empirical distribution of the first oracleN images
		ds, flat, err := imagedata.FirstImages(cfg.Data, oracleN)
		if err != nil {
			return nil, err
		}
		src, hmix = ds, hold.PointMasses(flat, ds.Dimension())
	} else {
		s, err := data.Open(cfg.Data, cfg.SwissNoise)
		if err != nil {
			return nil, err
		}
		mix, ok := s.(data.Mixture)
		if !ok {
			return nil, fmt.Errorf("--oracle needs mixture data with a closed-form score (gmm1d) or image data (the empirical distribution of --oracle-n images), not %s", s.Name())
		}
		src, hmix = s, mix.Hold()
	}
	hc, err := cfg.SDEConfig()
	if err != nil {
		return nil, err
	}
	sde, err := hold.New(hc)
	if err != nil {
		return nil, err
	}
	oracle, err := hold.NewMixtureOracle(sde, hmix)
	if err != nil {
		return nil, err
	}
	return &Model{Config: cfg, SDE: sde, Score: oracle, Source: src}, nil
}

// Oracle1D is the exact score of the paper's 1-D mixture under the default SDE of kind (HOLD with
// the given order; 0: the default order).
func Oracle1D(kind string, order int) (*Model, error) {
	cfg := hold.DefaultConfig(kind)
	if kind == hold.KindHOLD && order > 0 {
		cfg.Order = order
	}
	sde, err := hold.New(cfg)
	if err != nil {
		return nil, err
	}
	orc, err := hold.NewMixtureOracle(sde, hold.PaperMixture())
	if err != nil {
		return nil, err
	}
	return &Model{Config: OracleRunConfig(cfg, data.NameGMM1D), SDE: sde, Score: orc, Source: data.PaperMixture()}, nil
}

// OracleRunConfig describes an oracle model (an SDE and named data, no network) for messages.
func OracleRunConfig(cfg hold.Config, dataName string) (rc RunConfig) {
	rc = DefaultRunConfig()
	rc.Data, rc.SDE, rc.Order, rc.L, rc.Alpha = dataName, cfg.Kind, cfg.Order, cfg.L, cfg.Alpha
	return rc
}
