package companies

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzDecodeCompany sends arbitrary bytes through both decoders. Decoding
// may refuse a body but must never panic; a body it accepts must apply to
// a company that encodes as JSON, and the applied fields, sent back as a
// create body, must be accepted again: what the service stores it can read
// back from a client.
func FuzzDecodeCompany(f *testing.F) {
	seeds := []string{
		// Realistic bodies.
		`{"canonicalName":"Acme Robotics","website":"https://acme.example","companyType":"operating"}`,
		`{"canonicalName":"Acme Robotics","alternativeNames":["Acme","ACME Robotics Inc."],"website":"www.acme-robotics.com/about",` +
			`"description":"Warehouse robots.","shortDescription":"Robots","sector":"Industrials","industry":"Robotics",` +
			`"location":{"city":"Boston","state":"MA","country":"US"},"externalId":"crm-42","tags":["robotics","series-b"],` +
			`"custom":{"owner":"jane","score":0.7,"nested":{"a":[1,2,3]}},"companyType":"investor"}`,
		`{"website":null,"description":null,"location":null,"tags":null,"custom":null,"alternativeNames":null,"companyType":null}`,
		`{"canonicalName":"  Trimmed Name  ","tags":[" a ","a","b"],"alternativeNames":["x","x"]}`,
		`{"location":{},"externalId":"ext-1","custom":{}}`,
		`{"website":"http://localhost:8080/x","industry":""}`,
		`{"canonicalName":"Ünïcödé Gmbh 株式会社","location":{"city":"Zürich","country":"CH"}}`,
		// Nasty ones.
		``,
		` `,
		`null`,
		`[]`,
		`"string"`,
		`42`,
		`{}`,
		`{"canonicalName":null}`,
		`{"canonicalName":""}`,
		`{"canonicalName":"   "}`,
		`{"canonicalName":"a"}{"canonicalName":"b"}`,
		`{"canonicalName":"a"} trailing`,
		`{"canonicalName":"a","canonicalName":"b"}`,
		`{"canonicalName":1}`,
		`{"canonicalName":"a","unknown":1}`,
		`{"canonicalName":"a","location":{"planet":"Mars"}}`,
		`{"canonicalName":"a","location":"Boston"}`,
		`{"canonicalName":"a","location":{"city":null,"state":7}}`,
		`{"canonicalName":"a","website":"javascript:alert(1)"}`,
		`{"canonicalName":"a","website":"ftp://example.com"}`,
		`{"canonicalName":"a","website":"exa mple.com"}`,
		`{"canonicalName":"a","website":"https://"}`,
		`{"canonicalName":"a","website":"%zz"}`,
		`{"canonicalName":"a","externalId":"   "}`,
		`{"canonicalName":"a","companyType":"unicorn"}`,
		`{"canonicalName":"a","tags":[1,2]}`,
		`{"canonicalName":"a","tags":[""]}`,
		`{"canonicalName":"a","tags":"x"}`,
		`{"canonicalName":"a","custom":[]}`,
		`{"canonicalName":"a","custom":{"n":1e308,"m":-0,"s":"\u0000\ud800"}}`,
		`{"canonicalName":"a","custom":{"big":1e400}}`,
		`{"canonicalName":"\ud800\udc00\u2028<script>&"}`,
		"{\"canonicalName\":\"\xff\xfe invalid utf8\"}",
		"{\"canonicalName\":\"a\u0085\u00a0\"}",
		`{"canonicalName":"a",`,
		`{"canonicalName":"a"`,
		`{"canonicalName":"` + strings.Repeat("x", 301) + `"}`,
		`{"canonicalName":"a","tags":[` + strings.Repeat(`"t",`, 100) + `"t"]}`,
		`{"canonicalName":"a","custom":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200) + `}`,
		`{"canonicalName":"a","custom":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if fields, err := DecodeCreate(body); err == nil {
			if !fields.CanonicalName.Set {
				t.Fatalf("DecodeCreate accepted %q without canonicalName", body)
			}
			checkRoundTrip(t, "DecodeCreate", body, fields, &Company{})
		}
		if fields, err := DecodeUpdate(body); err == nil {
			// An update applies to a stored company, which always has a name.
			checkRoundTrip(t, "DecodeUpdate", body, fields, &Company{CanonicalName: "Acme"})
		}
	})
}

// checkRoundTrip applies fields to c, encodes it, and sends the create-able
// fields of the result back through DecodeCreate.
func checkRoundTrip(t *testing.T, decoder string, body []byte, fields Fields, c *Company) {
	t.Helper()
	fields.Apply(c)
	encoded, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("%s(%q): applied company does not encode: %v", decoder, body, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(encoded, &all); err != nil {
		t.Fatalf("%s(%q): encoded company %s does not decode: %v", decoder, body, encoded, err)
	}
	again := map[string]json.RawMessage{}
	for name, raw := range all {
		if slices.Contains(CreateFields, name) {
			again[name] = raw
		}
	}
	if len(again) != len(CreateFields) {
		t.Fatalf("the company record lacks some of CreateFields %v: %s", CreateFields, encoded)
	}
	resent, err := json.Marshal(again)
	if err != nil {
		t.Fatalf("%s(%q): re-encode fields: %v", decoder, body, err)
	}
	if _, err := DecodeCreate(resent); err != nil {
		t.Fatalf("%s accepted %q, but the stored fields %s are rejected as a create body: %v", decoder, body, resent, err)
	}
}
