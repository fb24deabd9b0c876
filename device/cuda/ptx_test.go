package cuda

import (
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPTXIsCurrent: the committed PTX was generated from kernels.cu as it is (scripts/cuda ptx
// writes its hash in the first line), and has every kernel the source defines.
func TestPTXIsCurrent(t *testing.T) {
	src, err := os.ReadFile("kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := os.ReadFile("kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(sha256 %x)", sha256.Sum256(src))
	first, _, _ := strings.Cut(string(ptx), "\n")
	if !strings.Contains(first, want) {
		t.Fatalf("kernels.ptx was generated from another kernels.cu (its first line: %q, want the hash %s): run scripts/cuda ptx", first, want)
	}
	kernels := regexp.MustCompile(`extern "C" __global__ void (\w+)\(`).FindAllStringSubmatch(string(src), -1)
	if len(kernels) < 19 {
		t.Fatalf("found %d kernels in kernels.cu", len(kernels))
	}
	for _, k := range kernels {
		if !strings.Contains(string(ptx), ".entry "+k[1]+"(") {
			t.Errorf("kernels.ptx has no entry %s", k[1])
		}
	}
}
