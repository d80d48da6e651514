package embed_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/embed"
)

// tiny is a vocabulary of three words in 3 dimensions, most frequent first.
var (
	tinyWords = []string{"the", "apple", "pear"}
	tinyVecs  = []float32{
		0, 0, 2, // the
		3, 4, 0, // apple
		0, 1, 0, // pear
	}
)

// writeTiny writes the tiny vocabulary as a file and returns its path and bytes.
func writeTiny(t *testing.T) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := embed.WriteWordVectors(&b, 3, tinyWords, tinyVecs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.vec")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.Bytes()
}

func TestWordVectorsWrittenAreReadBack(t *testing.T) {
	path, data := writeTiny(t)
	if want := len("SBWV1\n") + 8 + (2 + 3) + (2 + 5) + (2 + 4) + 3*3*4; len(data) != want {
		t.Errorf("the file is %d bytes, want %d", len(data), want)
	}
	if !bytes.HasPrefix(data, []byte("SBWV1\n\x03\x00\x00\x00\x03\x00\x00\x00\x03\x00the")) {
		t.Errorf("the header is %q", data[:20])
	}
	l, err := embed.OpenLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Dimensions() != 3 || l.Words() != 3 {
		t.Fatalf("%d dimensions and %d words, want 3 and 3", l.Dimensions(), l.Words())
	}
	got, err := l.Embed(context.Background(), []string{"Apple", "pear", "the", "APPLE, the apple!"})
	if err != nil {
		t.Fatal(err)
	}
	// Each vector was written at unit length; a text of one word is its
	// vector. Words weigh a/(a+p), p = 1/(rank·H(3)) by Zipf's law: in
	// three words "the" (rank 1) still weighs about half of what "apple"
	// (rank 2) does.
	h := 1 + 1.0/2 + 1.0/3
	wThe, wApple := 1e-3/(1e-3+1/h), 1e-3/(1e-3+1/(2*h))
	mixed := []float64{2 * wApple * 0.6, 2 * wApple * 0.8, wThe}
	n := math.Sqrt(mixed[0]*mixed[0] + mixed[1]*mixed[1] + mixed[2]*mixed[2])
	for i, want := range [][]float64{{0.6, 0.8, 0}, {0, 1, 0}, {0, 0, 1}, {mixed[0] / n, mixed[1] / n, mixed[2] / n}} {
		for k := range want {
			if math.Abs(float64(got[i][k])-want[k]) > 1e-6 {
				t.Errorf("text %d: %v, want %v", i, got[i], want)
				break
			}
		}
	}
}

func TestWriteWordVectorsRefusesWhatItCannotWrite(t *testing.T) {
	for name, c := range map[string]struct {
		dims  int
		words []string
		vecs  []float32
	}{
		"no dimensions":         {0, nil, nil},
		"numbers missing":       {2, []string{"a", "b"}, []float32{1, 0, 1}},
		"an empty word":         {1, []string{"a", ""}, []float32{1, 1}},
		"a word twice":          {1, []string{"a", "a"}, []float32{1, 1}},
		"a word too long":       {1, []string{strings.Repeat("a", 1<<16)}, []float32{1}},
		"a word not UTF-8":      {1, []string{"a\xff"}, []float32{1}},
		"a vector of zeros":     {2, []string{"a", "b"}, []float32{1, 0, 0, 0}},
		"a vector not finite":   {1, []string{"a"}, []float32{float32(math.NaN())}},
		"a vector of infinites": {1, []string{"a"}, []float32{float32(math.Inf(1))}},
	} {
		if err := embed.WriteWordVectors(new(bytes.Buffer), c.dims, c.words, c.vecs); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}

func TestOpenLocalRefusesACutOrDamagedFile(t *testing.T) {
	_, data := writeTiny(t)
	dir := t.TempDir()
	try := func(name string, b []byte) {
		t.Helper()
		path := filepath.Join(dir, "bad.vec")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := embed.OpenLocal(path)
		if err == nil {
			t.Errorf("%s: opened (%d words)", name, l.Words())
			return
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "make model") {
			t.Errorf("%s: %v, which names neither the file nor make model", name, err)
		}
	}
	for n := range len(data) {
		try(fmt.Sprintf("cut to %d bytes", n), data[:n])
	}
	try("a byte more", append(bytes.Clone(data), 0))
	try("another magic", append([]byte("SBWV2\n"), data[6:]...))
	try("a JSON file", []byte(`{"words": []}`))
	huge := bytes.Clone(data)
	huge[6], huge[7], huge[8], huge[9] = 0xff, 0xff, 0xff, 0x7f // dims
	try("absurd dimensions", huge)
	four := bytes.Clone(data)
	four[6] = 4
	try("4 dimensions, not 3", four)
	many := bytes.Clone(data)
	many[10], many[11], many[12] = 0x40, 0x54, 0x89 // 9,000,000 words
	try("9,000,000 words in a tiny file", many)
	twice := bytes.Replace(data, []byte("\x05\x00apple"), []byte("\x03\x00the"), 1) // "the" at ranks 1 and 2
	if bytes.Equal(twice, data) {
		t.Fatal("apple's entry not found")
	}
	try("a word twice", twice)
}

func TestOpenLocalSaysToRunMakeModelWhenTheFileIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin", "embed", "wink-sg-100d.vec")
	_, err := embed.OpenLocal(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "run make model") {
		t.Errorf("OpenLocal of a missing file: %v, want an error naming it, saying run make model, wrapping fs.ErrNotExist", err)
	}
	if _, err := embed.LoadLocal(path); err == nil {
		t.Error("LoadLocal of a missing file succeeded")
	}
}

func TestLoadLocalOpensAFileOncePerProcess(t *testing.T) {
	path, _ := writeTiny(t)
	a, err := embed.LoadLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := embed.LoadLocal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("LoadLocal opened the same file twice (by its absolute and its relative path)")
	}
}
