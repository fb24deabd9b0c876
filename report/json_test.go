package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
)

// TestWriteJSON: the profile written is the schema's document and reads back equal.
func TestWriteJSON(t *testing.T) {
	p, _ := analyzed(t, 6, "spmm")
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"schema\": \"gnnprof.profile\",\n") {
		t.Errorf("not an indented profile document: %.80q", buf.String())
	}
	var back analyze.Profile
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != analyze.SchemaVersion || back.Steps.Count != 6 || back.Breakdown.TotalNs != p.Breakdown.TotalNs ||
		len(back.Findings) != len(p.Findings) {
		t.Errorf("read back %d steps, mean %d ns, %d findings; wrote %d, %d, %d", back.Steps.Count, back.Breakdown.TotalNs,
			len(back.Findings), p.Steps.Count, p.Breakdown.TotalNs, len(p.Findings))
	}
}
