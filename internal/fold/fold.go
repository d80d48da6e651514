// Package fold is how the service compares text that a person typed: the
// one definition of "ignoring case and accents" that list filters
// (contains, startsWith), sort keys and both search engines share, so
// that "zurich" finds "Zürich" and "Émile" sorts with "emile" wherever a
// list or a search is served.
package fold

import (
	"slices"
	"strings"
)

//go:generate go run gen.go

// Text is s folded: in lower case, its letters without their diacritics
// ("Société Générale" is "societe generale"), and the Latin letters that
// are no letter plus an accent spelled as OpenSearch's asciifolding does
// ("Straße" is "strasse", "Łódź" is "lodz", "Æ" is "ae"). Diacritics are
// the combining marks that canonical decomposition (NFD) splits from a
// letter (U+0300 to U+036F: Latin, Greek and Cyrillic accents); the marks
// of other scripts are part of their letters and are kept. A letter sent
// with its accents as combining marks ("e" and U+0301) folds as the
// composed one ("é"). ASCII text is only lower-cased. The letters' bases
// come from a table generated from Unicode's decompositions (table.go), so
// that the service does not link a normalizer's tables.
func Text(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		switch i, ok := slices.BinarySearch(composed[:], r); {
		case isDiacritic(r):
		case ok:
			spell(&b, bases[i])
		default:
			spell(&b, r)
		}
	}
	return b.String()
}

// spell writes r, or its spelling in letters.
func spell(b *strings.Builder, r rune) {
	if i, ok := slices.BinarySearch(spelled[:], r); ok {
		b.WriteString(spellings[i])
		return
	}
	b.WriteRune(r)
}

// spelled are the lower-case Latin letters that NFD does not decompose
// (in order), spelled as spellings says, as Lucene's ASCIIFoldingFilter
// (OpenSearch's asciifolding) does: those of Latin-1 and Latin Extended-A,
// and a few common ones beyond.
var (
	spelled   = [...]rune{'ß', 'æ', 'ð', 'ø', 'þ', 'đ', 'ħ', 'ı', 'ĳ', 'ĸ', 'ŀ', 'ł', 'ŉ', 'ŋ', 'œ', 'ŧ', 'ſ', 'ƒ', 'ǆ', 'ǉ', 'ǌ', 'ǳ', 'ə'}
	spellings = [...]string{"ss", "ae", "d", "o", "th", "d", "h", "i", "ij", "q", "l", "l", "n", "n", "oe", "t", "s", "f", "dz", "lj", "nj", "dz", "a"}
)

// isDiacritic reports whether r is a combining diacritical mark.
func isDiacritic(r rune) bool { return r >= 0x0300 && r <= 0x036F }

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
