package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v, a profile (the versioned schema of analyze/SCHEMA.md) or a diff, as
// indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
