//go:build !(amd64 || arm64)

package jsonscan

import "encoding/binary"

// Word returns the eight bytes of b from i as a little-endian number (b[i:i+8], which must lie in
// b).
func Word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// UncheckedWord is Word, for a caller that has just checked that b[i:i+8] lies in b (where words
// are loaded byte by byte, the check is part of the load).
func UncheckedWord(b []byte, i int) uint64 { return Word(b, i) }
