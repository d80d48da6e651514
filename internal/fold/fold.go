// Package fold is how the service compares text that a person typed: the
// one definition of "ignoring case and accents" that list filters
// (contains, startsWith), sort keys and both search engines share, so
// that "zurich" finds "Zürich" and "Émile" sorts with "emile" wherever a
// list or a search is served.
package fold

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Text is s folded: in lower case, its letters without their diacritics
// ("Société Générale" is "societe generale"), and the Latin letters that
// are no letter plus an accent spelled as OpenSearch's asciifolding does
// ("Straße" is "strasse", "Łódź" is "lodz", "Æ" is "ae"). Diacritics are
// the combining marks that canonical decomposition (NFD) splits from a
// letter (U+0300 to U+036F: Latin, Greek and Cyrillic accents); the marks
// of other scripts are part of their letters and are kept. The result is
// in NFC, so text typed decomposed folds as text typed composed. ASCII
// text is only lower-cased.
func Text(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case isDiacritic(r):
		case letters[r] != "":
			b.WriteString(letters[r])
		default:
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// letters spell the lower-case Latin letters that NFD does not decompose
// as Lucene's ASCIIFoldingFilter (OpenSearch's asciifolding) does: those
// of Latin-1 and Latin Extended-A, and a few common ones beyond.
var letters = map[rune]string{
	'æ': "ae", 'ð': "d", 'ø': "o", 'þ': "th", 'ß': "ss",
	'đ': "d", 'ħ': "h", 'ı': "i", 'ĳ': "ij", 'ĸ': "q", 'ŀ': "l", 'ł': "l",
	'ŉ': "n", 'ŋ': "n", 'œ': "oe", 'ŧ': "t", 'ſ': "s",
	'ƒ': "f", 'ǆ': "dz", 'ǉ': "lj", 'ǌ': "nj", 'ǳ': "dz", 'ə': "a",
}

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
