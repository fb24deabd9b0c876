package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// A blob is a response body ready to serve: its bytes, an ETag computed from the content (so a
// client revalidating an unchanged page gets 304), and its gzip form, made on first request.
type blob struct {
	body   []byte
	etag   string
	ctype  string
	gzOnce sync.Once
	gz     []byte // nil when gzip would not make the body smaller
}

// minGzip is the size below which a body is sent as it is: gzip would save little.
const minGzip = 1024

func newBlob(body []byte, ctype string) *blob {
	sum := sha256.Sum256(body)
	return &blob{body: body, ctype: ctype, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
}

// gzipWriters are reused: a compressor's tables are most of its cost on a small page.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// gzipped is the body gzip-compressed, or nil when that is not smaller.
func (b *blob) gzipped() []byte {
	b.gzOnce.Do(func() {
		if len(b.body) < minGzip {
			return
		}
		var buf bytes.Buffer
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&buf)
		zw.Write(b.body)
		zw.Close()
		gzipWriters.Put(zw)
		if buf.Len() < len(b.body) {
			b.gz = buf.Bytes()
		}
	})
	return b.gz
}

// serve writes the blob, honouring If-None-Match and Accept-Encoding. Pages are revalidated on
// every use (no-cache): the runs they show change.
func (b *blob) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("ETag", b.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Type", b.ctype)
	if etagMatches(r.Header.Get("If-None-Match"), b.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := b.body
	if acceptsGzip(r) {
		if gz := b.gzipped(); gz != nil {
			h.Set("Content-Encoding", "gzip")
			body = gz
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// etagMatches reports whether an If-None-Match header names etag (or is "*").
func etagMatches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether the client takes gzip-encoded responses.
func acceptsGzip(r *http.Request) bool {
	for e := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(e), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
