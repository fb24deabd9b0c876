package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"strconv"
	"strings"
)

// Placeholders in an event's template, replaced per replica.
const (
	phTS   = "\x00TS\x00"
	phExt  = "\x00EXT\x00"
	phCorr = "\x00CORR\x00"
	phID   = "\x00ID\x00"
)

type template struct {
	parts [][]byte // text between placeholders
	holes []string // the placeholder after each part but the last
	ts    float64
	ext   int64
	corr  int64
	id    int64
}

func main() {
	in := flag.String("in", "", "source Kineto trace (.json or .json.gz)")
	out := flag.String("out", "", "output trace (.json)")
	sizeMB := flag.Int64("size", 1100, "stop after this many MB (10^6 bytes) of output")
	size := flag.Int64("bytes", 0, "stop after this many bytes of output (instead of -size)")
	flag.Parse()
	if *in == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *size <= 0 {
		*size = *sizeMB * 1e6
	}
	if err := run(*in, *out, *size); err != nil {
		log.Fatal(err)
	}
}

func run(in, out string, size int64) error {
	src, err := readSource(in)
	if err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var events []map[string]any
	if err := json.Unmarshal(top["traceEvents"], &events); err != nil {
		return fmt.Errorf("%s: traceEvents: %w", in, err)
	}
	var meta [][]byte
	var tmpls []template
	minTS, maxTS := math.Inf(1), math.Inf(-1)
	var maxID int64
	var mainPid, mainTid any
	for _, e := range events {
		ph, _ := e["ph"].(string)
		if ph == "M" || e["cat"] == "Trace" || ph == "i" {
			b, _ := marshal(e)
			meta = append(meta, b)
			continue
		}
		t, err := makeTemplate(e)
		if err != nil {
			return err
		}
		minTS = math.Min(minTS, t.ts)
		dur, _ := e["dur"].(float64)
		maxTS = math.Max(maxTS, t.ts+dur)
		maxID = max(maxID, t.ext, t.corr, t.id)
		if e["cat"] == "cpu_op" && mainPid == nil {
			mainPid, mainTid = e["pid"], e["tid"]
		}
		tmpls = append(tmpls, t)
	}
	period := math.Ceil(maxTS-minTS) + 1000
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cw := &countWriter{w: w}
	fmt.Fprintf(cw, `{"schemaVersion":1,"deviceProperties":%s,"distributedInfo":{"rank":0},"traceEvents":[`, orNull(top["deviceProperties"]))
	for k, m := range meta {
		if k > 0 {
			cw.Write([]byte(","))
		}
		cw.Write(m)
		cw.Write([]byte("\n"))
	}
	pid, _ := json.Marshal(mainPid)
	tid, _ := json.Marshal(mainTid)
	var num []byte
	replicas := 0
	for cw.n < size {
		shiftTS := float64(replicas) * period
		shiftID := int64(replicas) * (maxID + 1)
		fmt.Fprintf(cw, `,{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%s,"tid":%s,"ts":%.3f,"dur":%.3f,"args":{"External id":%d}}`+"\n",
			replicas, pid, tid, minTS+shiftTS, period-1000, shiftID+maxID+1)
		for _, t := range tmpls {
			cw.Write([]byte(","))
			for k, part := range t.parts {
				cw.Write(part)
				if k == len(t.holes) {
					break
				}
				num = num[:0]
				switch t.holes[k] {
				case phTS:
					num = strconv.AppendFloat(num, t.ts+shiftTS, 'f', 3, 64)
				case phExt:
					num = strconv.AppendInt(num, t.ext+shiftID, 10)
				case phCorr:
					num = strconv.AppendInt(num, t.corr+shiftID, 10)
				case phID:
					num = strconv.AppendInt(num, t.id+shiftID, 10)
				}
				cw.Write(num)
			}
			cw.Write([]byte("\n"))
		}
		replicas++
	}
	cw.Write([]byte("]}\n"))
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d bytes, %d replicas of %d events (+%d metadata)\n", out, cw.n, replicas, len(tmpls)+1, len(meta))
	return nil
}

// makeTemplate marshals e with placeholders where the replica's time and ids go.
func makeTemplate(e map[string]any) (template, error) {
	var t template
	t.ts, _ = e["ts"].(float64)
	e["ts"] = phTS
	if args, ok := e["args"].(map[string]any); ok {
		if v, ok := args["External id"].(float64); ok {
			t.ext = int64(v)
			args["External id"] = phExt
		}
		if v, ok := args["correlation"].(float64); ok {
			t.corr = int64(v)
			args["correlation"] = phCorr
		}
	}
	if v, ok := e["id"].(float64); ok {
		t.id = int64(v)
		e["id"] = phID
	}
	b, err := marshal(e)
	if err != nil {
		return t, err
	}
	// Split at the quoted placeholders, as json.Marshal escapes them.
	s := string(b)
	for {
		at, hole := -1, ""
		for _, h := range []string{phTS, phExt, phCorr, phID} {
			q, _ := json.Marshal(h)
			if i := strings.Index(s, string(q)); i >= 0 && (at < 0 || i < at) {
				at, hole = i, h
			}
		}
		if at < 0 {
			t.parts = append(t.parts, []byte(s))
			return t, nil
		}
		q, _ := json.Marshal(hole)
		t.parts = append(t.parts, []byte(s[:at]))
		t.holes = append(t.holes, hole)
		s = s[at+len(q):]
	}
}

// marshal encodes v as torch.profiler writes it: without json.Marshal's HTML escaping of <, > and &
// (kernel names are full of template brackets, which Kineto writes as they are).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func orNull(b json.RawMessage) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}

func readSource(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	}
	return b, nil
}

type countWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
