package runs

import (
	"bytes"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/input"
)

// MaxInputBytes bounds a run's input as stored JSON, whatever started the
// run: a run record holds its input and its output (at most
// steps.MaxOutputBytes), and together they must stay well under DynamoDB's
// 400 KB item limit.
const MaxInputBytes = input.MaxFreeBytes

// titleText is the accepted title: 1 to 120 characters, not only spaces.
var titleText = input.Text{Min: 1, Max: MaxTitle, Trim: true}

// DecodeNewRun parses the body of a run started through the API:
// {input?: object, dryRun?: bool, title?: string}; an empty body starts a
// run with empty input. input is at most input.MaxDepth levels deep and
// MaxInputBytes as JSON.
func DecodeNewRun(body []byte) (NewRun, error) {
	n := NewRun{StartedBy: StartedByAPI}
	if len(bytes.TrimSpace(body)) == 0 {
		return n, nil
	}
	o, err := input.ParseObject(body, "input", "dryRun", "title")
	if err != nil {
		return n, err
	}
	in, err := o.FreeObject("input")
	if err != nil {
		return n, err
	}
	dry, err := o.Bool("dryRun")
	if err != nil {
		return n, err
	}
	title, err := o.String("title", titleText)
	if err != nil {
		return n, err
	}
	if title.Null {
		return n, apperr.Invalid("title", "must be a string of 1 to %d characters", MaxTitle)
	}
	n.Input, n.DryRun, n.Title = in.Value, dry.Value, title.Value
	return n, nil
}

// DecodeTitle parses a rename body {title}: required, 1 to 120 characters.
func DecodeTitle(body []byte) (string, error) {
	o, err := input.ParseObject(body, "title")
	if err != nil {
		return "", err
	}
	title, err := o.String("title", titleText)
	if err == nil && (!title.Set || title.Null) {
		err = apperr.Invalid("title", "is required: a string of 1 to %d characters", MaxTitle)
	}
	return title.Value, err
}
