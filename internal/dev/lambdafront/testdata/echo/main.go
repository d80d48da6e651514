// Command echo is a Lambda function for the front's tests: it answers
// with the event it received and its own name, or, by the event's path,
// fails, sleeps, or answers in the other shapes a function may use.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

type event struct {
	RawPath               string            `json:"rawPath"`
	QueryStringParameters map[string]string `json:"queryStringParameters"`
}

func handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(ev.RawPath, "/fail"):
		return nil, errors.New("the function failed")
	case strings.HasSuffix(ev.RawPath, "/sleep"):
		d, _ := time.ParseDuration(ev.QueryStringParameters["for"])
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		return map[string]any{"statusCode": 200, "body": "slept"}, nil
	case strings.HasSuffix(ev.RawPath, "/bare"):
		return map[string]string{"hello": "world"}, nil
	case strings.HasSuffix(ev.RawPath, "/shaped"):
		return map[string]any{
			"statusCode":        201,
			"headers":           map[string]string{"content-type": "application/octet-stream", "x-one": "1"},
			"multiValueHeaders": map[string][]string{"x-many": {"a", "b"}},
			"cookies":           []string{"a=1; Path=/", "b=2"},
			"body":              "AAEC/w==",
			"isBase64Encoded":   true,
		}, nil
	}
	body, _ := json.Marshal(map[string]any{"function": os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), "event": raw})
	return map[string]any{"statusCode": 200, "headers": map[string]string{"content-type": "application/json"}, "body": string(body)}, nil
}

func main() { lambda.Start(handle) }
