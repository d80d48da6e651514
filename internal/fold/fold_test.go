package fold_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"golang.org/x/text/unicode/norm"

	"github.com/sourcebase/sourcebase/internal/fold"
)

func TestTextFoldsCaseAndDiacritics(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"Acme Robotics", "acme robotics"},
		{"Zürich Versicherung", "zurich versicherung"},
		{"Müller AG", "muller ag"},
		{"SOCIÉTÉ GÉNÉRALE", "societe generale"},
		{"Émile", "emile"},
		{"Crème Brûlée", "creme brulee"},
		{"Straße", "strasse"},
		{"STRAẞE", "strasse"},
		{"Æsir Øst", "aesir ost"},
		{"Łódź", "lodz"},
		{"Œuvre", "oeuvre"},
		{"Þór Đorđe", "thor dorde"},
		{"İstanbul Iğdır", "istanbul igdir"},
		{"ǅungla", "dzungla"},
		{"São Paulo Ñandú Čapek Dvořák Ångström", "sao paulo nandu capek dvorak angstrom"},
		{"Zu\u0308rich", "zurich"},       // typed decomposed
		{"Σίσυφος ЁЛКА", "σισυφος елка"}, // Greek and Cyrillic accents too
		{"がっこう 한국", "がっこう 한국"},           // marks of other scripts stay
		{"a.b*c?(d)\n", "a.b*c?(d)\n"},   // punctuation and spaces as they are
		{"\u0308", ""},                   // a lone diacritic is nothing
	} {
		if got := fold.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTextFoldsLatinLettersAsOpenSearchsAsciifoldingDoes holds the
// letters of Latin-1 and Latin Extended-A to Lucene's ASCIIFoldingFilter
// (OpenSearch's asciifolding, which bleve ports), after lower-casing as
// OpenSearch's analyzers do first: the two engines fold them alike.
func TestTextFoldsLatinLettersAsOpenSearchsAsciifoldingDoes(t *testing.T) {
	lucene := asciifolding.New()
	for r := rune(0x00C0); r <= 0x017F; r++ {
		if !unicode.IsLetter(r) {
			continue
		}
		want := string(lucene.Filter([]byte(strings.ToLower(string(r)))))
		if got := fold.Text(string(r)); got != want {
			t.Errorf("Text(%q) (%U) = %q, want %q", string(r), r, got, want)
		}
	}
}

func TestFoldedTextIsFoldedAndInNFC(t *testing.T) {
	for _, s := range []string{"Zürich", "STRAẞE", "Ǽ ǿ", "a\u0301\u0327", "ガ\u3099", "İ", "Ⱥ"} {
		once := fold.Text(s)
		if twice := fold.Text(once); twice != once {
			t.Errorf("Text(Text(%q)) = %q, not %q", s, twice, once)
		}
		if !norm.NFC.IsNormalString(once) {
			t.Errorf("Text(%q) = %q is not in NFC", s, once)
		}
	}
}

// The generated table is what Unicode's decompositions say (go generate
// ./internal/fold writes it): every letter NFD splits into a letter and
// diacritics folds as its decomposition without them; any other is kept
// as it is (the marks of other scripts are part of their letters).
func TestTheTableOfBaseLettersIsUnicodes(t *testing.T) {
	for r := rune(0x80); r <= 0x2FFF; r++ {
		if !unicode.IsLetter(r) {
			continue
		}
		lower := strings.ToLower(string(r))
		var b strings.Builder
		for _, x := range norm.NFD.String(lower) {
			if x < 0x0300 || x > 0x036F {
				b.WriteRune(x)
			}
		}
		want := fold.Text(lower)
		if b.String() != norm.NFD.String(lower) {
			want = fold.Text(norm.NFC.String(b.String()))
		}
		if got := fold.Text(string(r)); got != want {
			t.Errorf("Text(%q) = %q, want %q (its decomposition without diacritics)", r, got, want)
		}
	}
}
