// Command probe is a Lambda function for the emulator's tests: it reports
// what the Lambda context told it, fails, panics, sleeps or exits on
// request.
package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Do    string `json:"do"`
	Sleep string `json:"sleep"`
}

type response struct {
	RequestID   string `json:"requestId"`
	FunctionARN string `json:"functionArn"`
	DeadlineIn  int64  `json:"deadlineInMs"`
	Name        string `json:"name"`
	Env         string `json:"env"`
	Pid         int    `json:"pid"`
	MemoryMB    int    `json:"memoryMB"`
	ErrorType   string `json:"errorType,omitempty"`
	ErrorMsg    string `json:"errorMessage,omitempty"`
}

func handle(ctx context.Context, r request) (*response, error) {
	switch r.Do {
	case "fail":
		return nil, errors.New("asked to fail")
	case "panic":
		panic("asked to panic")
	case "exit":
		os.Exit(3)
	case "lookalike": // a response with an error's fields and more is a response
		return &response{Name: "lookalike", ErrorType: "NotAnError", ErrorMsg: "a field named like an error's"}, nil
	case "sleep":
		d, _ := time.ParseDuration(r.Sleep)
		time.Sleep(d)
	case "spin": // keep a CPU busy for Sleep
		d, _ := time.ParseDuration(r.Sleep)
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
	}
	lc, _ := lambdacontext.FromContext(ctx)
	dl, _ := ctx.Deadline()
	return &response{RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn, DeadlineIn: time.Until(dl).Milliseconds(),
		Name: lambdacontext.FunctionName, Env: os.Getenv("PROBE"), Pid: os.Getpid(),
		MemoryMB: lambdacontext.MemoryLimitInMB}, nil
}

func main() { lambda.Start(handle) }
