// Command shared runs a command beside one DynamoDB Local for the test
// binaries it starts to share: it starts the server, names its endpoint in
// SOURCEBASE_TEST_DYNAMODB (dynamolocal.EnvShared), runs the command, then
// stops the server and exits with the command's status.
//
//	go run ./internal/dynamolocal/shared go test ./...
//
// make test and make test-fast run the root module's tests through it, so
// that a package making a few hundred storage calls does not start a JVM
// of its own (testenv.Endpoint); a package that keeps a server busy for
// minutes still starts its own (testenv.OwnServer).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/sourcebase/sourcebase/internal/dynamolocal"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: shared command [argument ...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(name string, args []string) int {
	server, err := dynamolocal.Start(context.Background(), dynamolocal.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "shared: start DynamoDB Local: %v\n", err)
		return 1
	}
	defer server.Stop()

	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), dynamolocal.EnvShared+"="+server.Endpoint)
	// An interrupt reaches the command from the terminal as it reaches
	// us; we wait for the command to end and then stop the server.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if code := exit.ExitCode(); code > 0 {
				return code
			}
			return 1 // ended by a signal
		}
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		return 1
	}
	return 0
}
