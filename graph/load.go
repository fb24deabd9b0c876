package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gnnprof/gnnprof/internal/progress"
)

// Format names accepted by LoadOptions.Format.
const (
	FormatPlanetoid = "planetoid" // ind.<name>.{x,tx,allx,y,ty,ally,graph,test.index}
	FormatNpz       = "npz"       // gnn-benchmark .npz
	FormatLINQS     = "linqs"     // <name>.content + <name>.cites (plain or .gz)
	FormatMUSAE     = "musae"     // edge-list CSV + JSON features + CSV target (a folder or any of its files)
	FormatOGB       = "ogb"       // OGB node-property raw folder
)

// Formats lists the format names Load understands.
var Formats = []string{FormatPlanetoid, FormatNpz, FormatLINQS, FormatMUSAE, FormatOGB}

// LoadOptions tunes Load.
type LoadOptions struct {
	// Format forces a format (one of Formats); empty means detect it from the path.
	Format string
	// Seed drives the random split of datasets that ship none.
	Seed uint64
	// TrainFrac and ValFrac, when TrainFrac > 0, make that random split stratified by fraction
	// instead of the default Planetoid-style 20 per class / 500 validation / 1,000 test.
	TrainFrac, ValFrac float64
	// MaxDenseBytes caps the dense copy of sparse features (Dataset.X stays nil above it);
	// 0 means 2 GiB.
	MaxDenseBytes int64
	// OGBSplit names the split folder of an OGB dataset (default: the only one present).
	OGBSplit string
	// Target names the label column of a MUSAE target CSV (default: "target", "page_type" or
	// "mature", whichever exists).
	Target string
	// Progress, when set, receives the loading's progress (bytes read, then the phase).
	Progress progress.Func
	task     string // the progress task, set by Load
}

// Open returns the dataset a command-line argument names: a generator spec (see Generate) when
// it parses as one, otherwise a path for Load.
func Open(pathOrSpec string, opt LoadOptions) (*Dataset, error) {
	if IsSpec(pathOrSpec) {
		opt.Progress.Report(progress.Update{Task: "generating " + pathOrSpec})
		return Generate(pathOrSpec, opt.Seed)
	}
	return Load(pathOrSpec, opt)
}

// Load reads a dataset from a file, a folder or a Planetoid prefix (…/planetoid/ind.cora),
// detecting the format from the path unless opt.Format names one.
func Load(path string, opt LoadOptions) (*Dataset, error) {
	opt.task = "loading " + datasetName(path)
	opt.Progress.Report(progress.Update{Task: opt.task})
	format := opt.Format
	if format == "" {
		var err error
		if format, err = DetectFormat(path); err != nil {
			return nil, err
		}
	}
	switch format {
	case FormatPlanetoid:
		return loadPlanetoid(path, opt)
	case FormatNpz:
		data, err := readMaybeGzip(path, opt)
		if err != nil {
			return nil, err
		}
		ds, err := loadNpz(datasetName(path), data, opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return ds, nil
	case FormatLINQS:
		return loadLINQS(path, opt)
	case FormatMUSAE:
		return loadMUSAE(path, opt)
	case FormatOGB:
		return loadOGB(path, opt)
	}
	return nil, fmt.Errorf("unknown dataset format %q (known: %s)", format, strings.Join(Formats, ", "))
}

// DetectFormat guesses a dataset's format from its path.
func DetectFormat(path string) (string, error) {
	base := filepath.Base(path)
	st, err := os.Stat(path)
	if err != nil {
		// A Planetoid prefix is not a file itself.
		if strings.HasPrefix(base, "ind.") {
			if _, err2 := os.Stat(path + ".graph"); err2 == nil {
				return FormatPlanetoid, nil
			}
		}
		if _, err2 := os.Stat(path + ".content"); err2 == nil {
			return FormatLINQS, nil
		}
		if _, err2 := os.Stat(path + ".content.gz"); err2 == nil {
			return FormatLINQS, nil
		}
		return "", err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "raw", "edge.csv.gz")); err == nil {
			return FormatOGB, nil
		}
		if _, err := findMUSAE(path); err == nil {
			return FormatMUSAE, nil
		}
		return "", fmt.Errorf("%s: folder is neither an OGB dataset (raw/edge.csv.gz) nor a MUSAE folder (*_edges.csv + *.json + *_target.csv)", path)
	}
	b := strings.TrimSuffix(base, ".gz")
	switch {
	case strings.HasSuffix(b, ".npz"):
		return FormatNpz, nil
	case strings.HasPrefix(base, "ind."):
		return FormatPlanetoid, nil
	case strings.HasSuffix(b, ".content"), strings.HasSuffix(b, ".cites"):
		return FormatLINQS, nil
	case strings.HasSuffix(b, ".csv"), strings.HasSuffix(b, ".json"):
		return FormatMUSAE, nil
	}
	return "", fmt.Errorf("%s: cannot tell the dataset format from the name; use --format (%s)", path, strings.Join(Formats, ", "))
}

// datasetName derives a short name from a path ("…/cora.npz" → "cora").
func datasetName(path string) string {
	b := filepath.Base(strings.TrimRight(path, string(filepath.Separator)))
	b = strings.TrimSuffix(b, ".gz")
	b = strings.TrimPrefix(b, "ind.")
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	return b
}

// finishDataset fills what every loader leaves to the end: the class count, a default random
// split when there is none, the dense copy of sparse features, and a consistency check.
func finishDataset(ds *Dataset, opt LoadOptions) error {
	for _, y := range ds.Labels {
		ds.NumClasses = max(ds.NumClasses, int(y)+1)
	}
	if ds.Split.Train == nil && ds.Split.Val == nil && ds.Split.Test == nil {
		ds.Split = DefaultSplit(ds.Labels, ds.NumClasses, opt)
	}
	if ds.X == nil && ds.XSparse != nil {
		limit := opt.MaxDenseBytes
		if limit == 0 {
			limit = 2 << 30
		}
		if int64(ds.XSparse.Rows)*int64(ds.XSparse.Cols)*4 <= limit {
			ds.X = ds.XSparse.Dense()
		}
	}
	if ds.X == nil && ds.XSparse == nil {
		ds.NumFeatures = 0
		ds.X = []float32{}
	}
	if err := ds.Validate(); err != nil {
		return err
	}
	return nil
}

// DefaultSplit is the random split used for datasets that ship none: stratified by fraction
// when opt.TrainFrac > 0, else Planetoid-style (20 per class, 500 validation, 1,000 test).
func DefaultSplit(labels []int32, numClasses int, opt LoadOptions) Split {
	if opt.TrainFrac > 0 {
		return StratifiedSplit(labels, numClasses, opt.TrainFrac, opt.ValFrac, opt.Seed)
	}
	return PerClassSplit(labels, numClasses, 20, 500, 1000, opt.Seed)
}
