package embed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"
)

// The word vector file that cmd/embedmodel writes and Local reads, all
// numbers little-endian:
//
//	"SBWV1\n"                      magic
//	dims  uint32                   numbers per vector
//	count uint32                   words
//	count × (uint16 n, n bytes)    the words (UTF-8), most frequent first
//	count × dims float32           their vectors, in the words' order, each of unit length
//
// A word's position is its frequency rank, which the weighting reads
// (Local).
const wordVecMagic = "SBWV1\n"

// Bounds a file must keep: they catch a corrupt header before it asks
// for gigabytes.
const (
	maxWordVecDims  = 4096
	maxWordVecCount = 10_000_000
)

// WriteWordVectors writes words and their vectors (vecs holds
// len(words)×dims numbers, word i's at [i×dims, (i+1)×dims)) as a word
// vector file, each vector scaled to unit length. Words must be non-empty,
// valid UTF-8, at most 65,535 bytes and distinct; a vector must be finite
// and not all zeros.
func WriteWordVectors(w io.Writer, dims int, words []string, vecs []float32) error {
	if dims < 1 || dims > maxWordVecDims {
		return fmt.Errorf("word vectors: %d dimensions, want 1 to %d", dims, maxWordVecDims)
	}
	if len(words) > maxWordVecCount {
		return fmt.Errorf("word vectors: %d words, at most %d", len(words), maxWordVecCount)
	}
	if len(vecs) != len(words)*dims {
		return fmt.Errorf("word vectors: %d numbers for %d words of %d dimensions, want %d", len(vecs), len(words), dims, len(words)*dims)
	}
	seen := make(map[string]bool, len(words))
	for _, word := range words {
		switch {
		case word == "" || len(word) > math.MaxUint16 || !utf8.ValidString(word):
			return fmt.Errorf("word vectors: the word %q is empty, longer than %d bytes or not UTF-8", Truncate(word, 40), math.MaxUint16)
		case seen[word]:
			return fmt.Errorf("word vectors: the word %q twice", word)
		}
		seen[word] = true
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var b [8]byte
	bw.WriteString(wordVecMagic)
	binary.LittleEndian.PutUint32(b[0:4], uint32(dims))
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(words)))
	bw.Write(b[:8])
	for _, word := range words {
		binary.LittleEndian.PutUint16(b[0:2], uint16(len(word)))
		bw.Write(b[:2])
		bw.WriteString(word)
	}
	for i, word := range words {
		v := vecs[i*dims : (i+1)*dims]
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
			return fmt.Errorf("word vectors: the vector of %q is all zeros or not finite", word)
		}
		scale := 1 / math.Sqrt(sum)
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[0:4], math.Float32bits(float32(float64(x)*scale)))
			bw.Write(b[:4])
		}
	}
	return bw.Flush()
}

// errBadWordVectors wraps what is wrong with a file that is no word
// vector file, or a cut or damaged one.
var errBadWordVectors = errors.New("not a word vector file (SBWV1), or a truncated or damaged one")

// readWordVectors reads a whole word vector file of size bytes from r:
// the dimensions, the words in the file's order and their vectors (flat,
// as WriteWordVectors takes them). It reads through a small buffer, so
// that loading holds the vectors once, not the file beside them, and
// checks the header against size before it allocates.
func readWordVectors(r io.Reader, size int64) (dims int, words []string, vecs []float32, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errBadWordVectors, fmt.Sprintf(format, args...))
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var head [len(wordVecMagic) + 8]byte
	n, err := io.ReadFull(br, head[:])
	switch m := min(n, len(wordVecMagic)); {
	case n == 0 && err == io.EOF:
		return 0, nil, nil, bad("the file is empty")
	case string(head[:m]) != wordVecMagic[:m]:
		return 0, nil, nil, bad("it does not start with %q", wordVecMagic)
	case err == io.ErrUnexpectedEOF:
		return 0, nil, nil, bad("the header is cut short")
	case err != nil:
		return 0, nil, nil, err
	}
	p := head[len(wordVecMagic):]
	d, count := binary.LittleEndian.Uint32(p[0:4]), binary.LittleEndian.Uint32(p[4:8])
	if d < 1 || d > maxWordVecDims || count > maxWordVecCount {
		return 0, nil, nil, bad("%d dimensions and %d words are out of bounds", d, count)
	}
	dims = int(d)
	read := int64(len(head))
	if least := read + int64(count)*(3+int64(dims)*4); size < least {
		return 0, nil, nil, bad("%d bytes cannot hold %d words of %d dimensions (%d bytes at least)", size, count, dims, least)
	}
	words = make([]string, count)
	var buf []byte
	for i := range words {
		var nb [2]byte
		if _, err := io.ReadFull(br, nb[:]); err != nil {
			return 0, nil, nil, bad("the words end at word %d of %d", i, count)
		}
		n := int(binary.LittleEndian.Uint16(nb[:]))
		if n == 0 {
			return 0, nil, nil, bad("word %d of %d is empty", i, count)
		}
		buf = slices.Grow(buf[:0], n)[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return 0, nil, nil, bad("word %d of %d is cut short", i, count)
		}
		words[i] = string(buf)
		read += 2 + int64(n)
	}
	if want := int64(count) * int64(dims) * 4; size-read != want {
		return 0, nil, nil, bad("%d bytes of vectors, want %d (%d words × %d dimensions × 4)", size-read, want, count, dims)
	}
	vecs = make([]float32, int(count)*dims)
	chunk := make([]byte, 1<<16)
	for i := 0; i < len(vecs); {
		n := min(len(chunk)/4, len(vecs)-i)
		if _, err := io.ReadFull(br, chunk[:4*n]); err != nil {
			return 0, nil, nil, bad("the vectors end after %d of %d numbers (%d words × %d dimensions)", i, len(vecs), count, dims)
		}
		for j := range n {
			vecs[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(chunk[4*j:]))
		}
		i += n
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return 0, nil, nil, err
		}
		return 0, nil, nil, bad("bytes follow the %d words' vectors", count)
	}
	return dims, words, vecs, nil
}

// Truncate cuts s to at most n bytes at a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
