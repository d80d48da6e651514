package awsenv_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/awsenv"
)

func TestOnlyAThrottleOrALimitIsACallRefusedWhichDidNothing(t *testing.T) {
	api := func(code string, fault smithy.ErrorFault) error {
		return fmt.Errorf("start: %w", &smithy.GenericAPIError{Code: code, Message: "m", Fault: fault})
	}
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"Step Functions throttling":       {api("ThrottlingException", smithy.FaultClient), true},
		"Step Functions' open executions": {api("ExecutionLimitExceeded", smithy.FaultClient), true},
		"classified as unavailable":       {awsenv.Classify(api("ThrottlingException", smithy.FaultClient), "x"), true},
		"a server fault (may have run)":   {api("InternalServerError", smithy.FaultServer), false},
		"a deadline (may have run)":       {context.DeadlineExceeded, false},
		"a bad request":                   {api("ValidationException", smithy.FaultClient), false},
	} {
		if got := awsenv.Refused(c.err); got != c.want {
			t.Errorf("%s: Refused = %v, want %v", name, got, c.want)
		}
	}
}

func TestCapacityErrorsOfAWSServicesAreUnavailableAndOthersAreNot(t *testing.T) {
	api := func(code string, fault smithy.ErrorFault) error {
		return fmt.Errorf("start: %w", &smithy.GenericAPIError{Code: code, Message: "m", Fault: fault})
	}
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("x")}}
	}
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"Step Functions throttling":       {api("ThrottlingException", smithy.FaultClient), true},
		"SQS throttled":                   {api("RequestThrottled", smithy.FaultClient), true},
		"Step Functions' open executions": {api("ExecutionLimitExceeded", smithy.FaultClient), true},
		"a server fault":                  {api("InternalServerError", smithy.FaultServer), true},
		"a 503":                           {status(503), true},
		"a deadline":                      {context.DeadlineExceeded, true},
		"a bad request":                   {api("ValidationException", smithy.FaultClient), false},
		"a missing state machine":         {api("StateMachineDoesNotExist", smithy.FaultClient), false},
		"no error":                        {nil, false},
	} {
		if got := awsenv.Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable = %v, want %v", name, got, c.want)
		}
		if got := errors.Is(awsenv.Classify(c.err, "it could not be done"), apperr.ErrUnavailable); got != c.want {
			t.Errorf("%s: Classify is ErrUnavailable %v, want %v", name, got, c.want)
		}
	}
}
