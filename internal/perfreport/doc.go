// Package perfreport is the performance report of the service,
// docs/performance.md, and the command that regenerates it: its test
// TestPerformanceReport. With -update it writes the report; without, it is
// a smoke test of the same code (short attacks and soak, the report written
// to a temporary directory) that `go test ./...` runs.
//
//	make bench   # go test ./internal/perfreport -run TestPerformanceReport -update -attack 10s -soak 5m -steady 45s -functions
//
// What it measures, in one run, against the whole handler stack served
// over real HTTP (the dev server's, internal/dev/apitest) and DynamoDB Local:
//
//   - a vegeta load test (github.com/tsenart/vegeta/v12, pinned as a Go
//     tool in go.mod, run as its own process so that this process's CPU
//     is the service's) of each endpoint at the highest rate its workers
//     reach, beside the bare aws-sdk-go-v2 operation the endpoint needs
//     and a minimal net/http server making the same call (the floor),
//     run on the same client with the same number of workers, so the
//     overhead reads as a ratio of throughput, latency and CPU per request;
//   - DynamoDB calls and consumed capacity per request of each endpoint,
//     from ReturnConsumedCapacity set on every SDK call by a middleware
//     of the client (apitest.Meter), and the AWS cost per million requests from
//     them and the list prices stated in the report;
//   - every route of the route table, a few successful requests each
//     (endpoints_test.go has a recipe per route; a route without one
//     fails the report): DynamoDB calls, capacity and cost per request;
//   - the Lambda path in process: CPU per request of the API Gateway
//     adapter over the handler, beside the handler alone, at
//     GOMAXPROCS=1 and at the machine's;
//   - a soak at a fixed rate: errors and the process's RSS at its start
//     and end;
//   - with -functions: each function's linux/arm64 bootstrap size, its
//     cold start (process start to first response) under the Runtime API
//     emulator behind the local API Gateway front, and its bootstrap's
//     warm CPU per request;
//   - with -steady: a warm search's read units at one company write and
//     one search a second, once the change feed's window has filled;
//   - the targets of the second cost round (issue 26) before and after
//     (targets_test.go): the before figures are constants, the after ones
//     this run's, including a webhook's own calls without the run it
//     starts (apitest.Usage.Run) and the write units of one PutItem of the
//     created company's item with and without its index attributes.
//
// Flags (after the package on the go test command line): -update, -attack
// (duration of each load test), -workers, -soak, -soak-rate, -steady,
// -functions; -usage, with the guard's test
// (TestEveryRouteKeepsItsCommittedDynamoDBUsage) only, rewrites
// testdata/usage.json from the guard's own measurement (make bench runs it
// after the report).
package perfreport
