package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// A blob is a response body ready to serve: its bytes, their gzip form when that is smaller,
// and an ETag computed from the content, so a client revalidating an unchanged page gets 304.
type blob struct {
	body, gz []byte
	etag     string
	ctype    string
}

// minGzip is the size below which a body is sent as it is: gzip would save little.
const minGzip = 1024

func newBlob(body []byte, ctype string) *blob {
	sum := sha256.Sum256(body)
	b := &blob{body: body, ctype: ctype, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
	if len(body) >= minGzip {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body) {
			b.gz = buf.Bytes()
		}
	}
	return b
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
	if b.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = b.gz
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
