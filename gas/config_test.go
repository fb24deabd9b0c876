package gas

import (
	"strings"
	"testing"
)

// TestDefaultConfig checks that the reference's settings reach the configuration and that
// Validate rejects what cannot train.
func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig("gat", "Cora")
	if c.Hidden != 8 || c.Heads != 8 || c.OutHeads != 1 || c.Parts != 40 || c.BatchParts != 10 || c.LR != 0.005 ||
		c.Epochs != 400 || c.GradNorm != 1 || c.Dropout != 0.6 {
		t.Errorf("Cora GAT: %+v", c)
	}
	if c := DefaultConfig("gat", "pubmed"); c.OutHeads != 8 || c.BatchParts != 1 {
		t.Errorf("PubMed GAT: %+v", c)
	}
	if c := DefaultConfig("appnp", "cora"); c.Layers != 10 || c.Alpha != 0.1 || c.Hidden != 64 || c.Parts != 4 || c.WeightDecay != 5e-3 {
		t.Errorf("Cora APPNP: %+v", c)
	}
	if c := DefaultConfig("gcn2", "citeseer"); c.Layers != 32 || c.Hidden != 256 || c.Theta != 0.6 || c.NonRegWeightDecay != 5e-4 {
		t.Errorf("CiteSeer GCNII: %+v", c)
	}
	for _, model := range Models {
		c := DefaultConfig(model, "sbm:nodes=100")
		if err := c.Validate(); err != nil {
			t.Errorf("%s defaults: %v", model, err)
		}
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Model = "mlp" }, "unknown model"},
		{func(c *Config) { c.Partitioner = "kmeans" }, "unknown partitioner"},
		{func(c *Config) { c.BatchParts = 41 }, "batch parts"},
		{func(c *Config) { c.Layers = 0 }, "layers"},
		{func(c *Config) { c.Dropout = 1 }, "dropout"},
		{func(c *Config) { c.LR = 0 }, "learning rate"},
	} {
		c := DefaultConfig("gcn", "")
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one about %s", c, err, tc.want)
		}
	}
}
