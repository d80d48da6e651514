package localsfn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/dev/localsfn"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

func TestMain(m *testing.M) {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Exit(m.Run())
}

const lambdaARN = "arn:aws:lambda:us-east-1:000000000000:function:"

func start(t *testing.T, tasks localsfn.TaskFunc, machines map[string]string) *localsfn.Server {
	t.Helper()
	s, err := localsfn.Start(localsfn.Options{Tasks: tasks, StateMachines: machines, SkipWaits: true, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("interpreter: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}

func def(t *testing.T, d map[string]any) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// finished polls DescribeExecution (bounded) until the execution is no longer running.
func finished(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	for deadline := time.Now().Add(testenv.Scaled(30 * time.Second)); time.Now().Before(deadline); {
		out, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("DescribeExecution: %v", err)
		}
		if out.Status != types.ExecutionStatusRunning {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("execution %s still running", arn)
	return nil
}

func startExecution(t *testing.T, c *sfn.Client, machine, name, input string) string {
	t.Helper()
	out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{
		StateMachineArn: aws.String(machine), Name: aws.String(name), Input: aws.String(input),
	})
	if err != nil {
		t.Fatalf("StartExecution %s: %v", name, err)
	}
	return aws.ToString(out.ExecutionArn)
}

func TestExecutionsRunTheirDefinitionWithTasksRoutedByResourceAndAreDescribedAsStepFunctionsDoes(t *testing.T) {
	t.Parallel()
	double := localsfn.StateMachineARN("double")
	refuse := localsfn.StateMachineARN("refuse")
	var seen sync.Map
	s := start(t, func(_ context.Context, resource string, input []byte) ([]byte, error) {
		var in struct {
			N    int    `json:"n"`
			Name string `json:"name"`
		}
		json.Unmarshal(input, &in)
		seen.Store(resource, in.Name)
		return json.Marshal(map[string]int{"n": in.N * 2})
	}, map[string]string{
		double: def(t, map[string]any{"StartAt": "Double", "States": map[string]any{
			"Double": map[string]any{"Type": "Task", "Resource": lambdaARN + "double",
				"Parameters": map[string]any{"n.$": "$.n", "name.$": "$$.Execution.Name"}, "End": true},
		}}),
		refuse: def(t, map[string]any{"StartAt": "No", "States": map[string]any{
			"No": map[string]any{"Type": "Fail", "Error": "Refused", "Cause": "not today"},
		}}),
	})
	c := s.Client()

	arn := startExecution(t, c, double, "first", `{"n":21}`)
	if want := "arn:aws:states:us-east-1:000000000000:execution:double:first"; arn != want || localsfn.ExecutionARN(double, "first") != want {
		t.Errorf("execution ARN = %s, want %s", arn, want)
	}
	out := finished(t, c, arn)
	if out.Status != types.ExecutionStatusSucceeded || aws.ToString(out.Output) != `{"n":42}` {
		t.Errorf("execution = %s %s, want SUCCEEDED {\"n\":42}", out.Status, aws.ToString(out.Output))
	}
	if aws.ToString(out.Name) != "first" || aws.ToString(out.StateMachineArn) != double || aws.ToString(out.Input) != `{"n":21}` || out.StartDate == nil || out.StopDate == nil {
		t.Errorf("description = %+v", out)
	}
	if name, _ := seen.Load(lambdaARN + "double"); name != "first" {
		t.Errorf("the task saw execution name %v, want first (the context object)", name)
	}

	out = finished(t, c, startExecution(t, c, refuse, "second", `{}`))
	if out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "Refused" || aws.ToString(out.Cause) != "not today" || out.Output != nil {
		t.Errorf("failed execution = %s %q %q output %v", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause), out.Output)
	}
	if e, ok := s.Describe(arn); !ok || e.Status != localsfn.Succeeded {
		t.Errorf("Describe = %+v %v", e, ok)
	}
}

func TestStartingAnExecutionAgainIsIdempotentWhileItRunsWithTheSameInputAndRefusedOtherwise(t *testing.T) {
	t.Parallel()
	machine := localsfn.StateMachineARN("held")
	release := make(chan struct{})
	s := start(t, func(ctx context.Context, _ string, input []byte) ([]byte, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return input, nil
	}, map[string]string{machine: def(t, map[string]any{"StartAt": "Hold", "States": map[string]any{
		"Hold": map[string]any{"Type": "Task", "Resource": lambdaARN + "hold", "End": true},
	}})})
	c := s.Client()
	ctx := context.Background()

	first, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	if err != nil {
		t.Fatalf("same name, same input, still running: %v", err)
	}
	if aws.ToString(again.ExecutionArn) != aws.ToString(first.ExecutionArn) || !again.StartDate.Equal(*first.StartDate) {
		t.Errorf("restart = %s %v, want the first execution %s %v", aws.ToString(again.ExecutionArn), again.StartDate, aws.ToString(first.ExecutionArn), first.StartDate)
	}
	var exists *types.ExecutionAlreadyExists
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String("run-1"), Input: aws.String(`{"a":2}`)}); !errors.As(err, &exists) {
		t.Errorf("same name, other input: %v, want ExecutionAlreadyExists", err)
	}
	if n := len(s.Executions()); n != 1 {
		t.Errorf("%d executions, want 1", n)
	}

	close(release)
	if e, err := s.Wait(ctx, aws.ToString(first.ExecutionArn)); err != nil || e.Status != localsfn.Succeeded || e.Output != `{"a":1}` {
		t.Fatalf("Wait = %+v, %v", e, err)
	}
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)}); !errors.As(err, &exists) {
		t.Errorf("same name and input after the execution ended: %v, want ExecutionAlreadyExists", err)
	}
	// Without a name, every start is a new execution.
	a := startExecutionUnnamed(t, c, machine)
	b := startExecutionUnnamed(t, c, machine)
	if a == b {
		t.Errorf("two unnamed starts share the execution %s", a)
	}
}

func startExecutionUnnamed(t *testing.T, c *sfn.Client, machine string) string {
	t.Helper()
	out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(machine)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.ExecutionArn)
}

func TestRequestsStepFunctionsRefusesAreRefusedWithItsErrors(t *testing.T) {
	t.Parallel()
	machine := localsfn.StateMachineARN("pass")
	s := start(t, nil, map[string]string{machine: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`})
	c := s.Client()
	ctx := context.Background()

	for _, name := range []string{"", strings.Repeat("a", 81), "a b", "a\tb", "a<b", "a>b", "a{b", "a}b", "a[b", "a]b", "a?b", "a*b",
		`a"b`, "a#b", "a%b", `a\b`, "a^b", "a|b", "a~b", "a`b", "a$b", "a&b", "a,b", "a;b", "a:b", "a/b", "a\x00b", "a\x1fb", "a\x7fb", "a\u0085b"} {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String(name)})
		var invalid *types.InvalidName
		if !errors.As(err, &invalid) {
			t.Errorf("name %q: %v, want InvalidName", name, err)
		}
	}
	for _, name := range []string{strings.Repeat("é", 80), "01JD3XK5N6R7S8T9V0W1X2Y3Z4", "run-1_a.b(c)@d+e=f'g!h"} {
		if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String(name)}); err != nil {
			t.Errorf("name %q: %v", name, err)
		}
	}

	var missing *types.StateMachineDoesNotExist
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(localsfn.StateMachineARN("other"))}); !errors.As(err, &missing) {
		t.Errorf("unknown state machine: %v, want StateMachineDoesNotExist", err)
	}
	var badARN *types.InvalidArn
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String("pass")}); !errors.As(err, &badARN) {
		t.Errorf("state machine ARN %q: %v, want InvalidArn", "pass", err)
	}
	var badInput *types.InvalidExecutionInput
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine), Input: aws.String("{nope")}); !errors.As(err, &badInput) {
		t.Errorf("input that is not JSON: %v, want InvalidExecutionInput", err)
	}
	var noExec *types.ExecutionDoesNotExist
	if _, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:000000000000:execution:pass:never")}); !errors.As(err, &noExec) {
		t.Errorf("unknown execution: %v, want ExecutionDoesNotExist", err)
	}
}

func TestTaskErrorNamesDriveRetryAndCatch(t *testing.T) {
	t.Parallel()
	machine := localsfn.StateMachineARN("retry-catch")
	var flaky atomic.Int32
	s := start(t, func(_ context.Context, resource string, input []byte) ([]byte, error) {
		switch strings.TrimPrefix(resource, lambdaARN) {
		case "flaky":
			if flaky.Add(1) <= 2 {
				return nil, &localsfn.TaskError{Name: "Custom.Transient", Cause: "try again"}
			}
			return []byte(`"ok"`), nil
		case "fatal":
			return nil, &localsfn.TaskError{Name: "Custom.Fatal", Cause: "gave up"}
		default:
			return nil, errors.New("plain failure")
		}
	}, map[string]string{machine: def(t, map[string]any{"StartAt": "Flaky", "States": map[string]any{
		"Flaky": map[string]any{"Type": "Task", "Resource": lambdaARN + "flaky", "ResultPath": "$.flaky", "Next": "Fatal",
			"Retry": []any{map[string]any{"ErrorEquals": []string{"Custom.Transient"}, "IntervalSeconds": 30, "MaxAttempts": 3}}},
		"Fatal": map[string]any{"Type": "Task", "Resource": lambdaARN + "fatal", "Next": "Plain",
			"Catch": []any{map[string]any{"ErrorEquals": []string{"Custom.Fatal"}, "ResultPath": "$.fatal", "Next": "Plain"}}},
		"Plain": map[string]any{"Type": "Task", "Resource": lambdaARN + "plain", "End": true,
			"Catch": []any{map[string]any{"ErrorEquals": []string{"States.TaskFailed"}, "ResultPath": "$.plain", "Next": "Done"}}},
		"Done": map[string]any{"Type": "Succeed"},
	}})})
	c := s.Client()

	out := finished(t, c, startExecution(t, c, machine, "x", `{}`))
	if out.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution = %s %s %s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	var got map[string]any
	json.Unmarshal([]byte(aws.ToString(out.Output)), &got)
	want := `map[fatal:map[Cause:gave up Error:Custom.Fatal] flaky:ok plain:map[Cause:plain failure Error:States.TaskFailed]]`
	if fmt.Sprint(got) != want {
		t.Errorf("output = %v\nwant %s", got, want)
	}
	if n := flaky.Load(); n != 3 {
		t.Errorf("the flaky task ran %d times, want 3 (two retries)", n)
	}
}

// TestLambdaTasksFailWithTheFunctionsErrorTypeAndCrashesAsLambdaUnknown
// runs tasks in a real bootstrap (the Runtime API emulator's probe).
func TestLambdaTasksFailWithTheFunctionsErrorTypeAndCrashesAsLambdaUnknown(t *testing.T) {
	t.Parallel()
	bootstrap := filepath.Join(t.TempDir(), "probe", "bootstrap")
	if err := lambdaenv.Build("../lambdaenv", "./testdata/probe", bootstrap); err != nil {
		t.Fatal(err)
	}
	fn := lambdaenv.NewFunction(lambdaenv.Options{Name: "probe", Bootstrap: bootstrap, Timeout: testenv.Scaled(10 * time.Second)})
	t.Cleanup(fn.Close)
	machine := localsfn.StateMachineARN("probe")
	s := start(t, localsfn.Lambdas(map[string]localsfn.Invoker{lambdaARN + "probe": fn}), map[string]string{machine: def(t, map[string]any{
		"StartAt": "Invoke", "States": map[string]any{
			"Invoke": map[string]any{"Type": "Task", "Resource": lambdaARN + "probe", "End": true},
		}})})
	c := s.Client()

	out := finished(t, c, startExecution(t, c, machine, "ok", `{}`))
	var answer struct{ Name string }
	json.Unmarshal([]byte(aws.ToString(out.Output)), &answer)
	if out.Status != types.ExecutionStatusSucceeded || answer.Name != "probe" {
		t.Errorf("execution = %s %s", out.Status, aws.ToString(out.Output))
	}
	out = finished(t, c, startExecution(t, c, machine, "fail", `{"do":"fail"}`))
	if out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "errorString" ||
		aws.ToString(out.Cause) != `{"errorType":"errorString","errorMessage":"asked to fail"}` {
		t.Errorf("failing function: %s %s %s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	out = finished(t, c, startExecution(t, c, machine, "exit", `{"do":"exit"}`))
	if out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "Lambda.Unknown" || !strings.Contains(aws.ToString(out.Cause), "Runtime.ExitError") {
		t.Errorf("crashing function: %s %s %s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}

	other := localsfn.StateMachineARN("elsewhere")
	s.AddStateMachine(other, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"`+lambdaARN+`nowhere","End":true}}}`)
	out = finished(t, c, startExecution(t, c, other, "x", `{}`))
	if aws.ToString(out.Error) != "Lambda.ResourceNotFoundException" {
		t.Errorf("task of no function: %s %s", aws.ToString(out.Error), aws.ToString(out.Cause))
	}
}

func TestAnExecutionPastItsTimeoutSecondsTimesOut(t *testing.T) {
	t.Parallel()
	machine := localsfn.StateMachineARN("slow")
	s := start(t, func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		<-ctx.Done() // never answers while the server runs
		return nil, ctx.Err()
	}, map[string]string{machine: def(t, map[string]any{"TimeoutSeconds": 1, "StartAt": "Hang", "States": map[string]any{
		"Hang": map[string]any{"Type": "Task", "Resource": lambdaARN + "hang", "End": true},
	}})})
	c := s.Client()
	out := finished(t, c, startExecution(t, c, machine, "slow", `{}`))
	if out.Status != types.ExecutionStatusTimedOut || aws.ToString(out.Error) != "States.Timeout" {
		t.Errorf("execution = %s %q, want TIMED_OUT States.Timeout", out.Status, aws.ToString(out.Error))
	}
}
