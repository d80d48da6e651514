package runs

import (
	"bytes"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// MaxInputBytes bounds a run's input as stored JSON, whatever started the
// run: a run record holds its input and its output (at most
// steps.MaxOutputBytes), and together they must stay well under DynamoDB's
// 400 KB item limit.
const MaxInputBytes = jsonbody.MaxFreeBytes

// DecodeNewRun parses the body of a run started through the API as
// NewRunDef declares it: {input?: object, dryRun?: bool, title?: string};
// an empty body starts a run with empty input. input is at most
// input.MaxDepth levels deep and MaxInputBytes as JSON.
func DecodeNewRun(body []byte) (NewRun, error) {
	n := NewRun{StartedBy: StartedByAPI}
	if len(bytes.TrimSpace(body)) == 0 {
		return n, nil
	}
	m, err := NewRunDef.Decode(body, true)
	if err != nil {
		return n, err
	}
	if v, ok := m["title"]; ok && v == nil {
		return n, apperr.Invalid("title", "must be a string of 1 to %d characters", MaxTitle)
	}
	n.Input, _ = m["input"].(map[string]any)
	n.DryRun, _ = m["dryRun"].(bool)
	n.Title, _ = m["title"].(string)
	return n, nil
}

// DecodeTitle parses a rename body {title} as TitleDef declares it:
// required, 1 to 120 characters.
func DecodeTitle(body []byte) (string, error) {
	m, err := TitleDef.Decode(body, true)
	if err != nil {
		return "", err
	}
	title, _ := m["title"].(string)
	return title, nil
}
