package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/localdev/localdevtest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// Sets the environment, so not parallel.
func TestAnUnreachableDynamoDBEndpointFailsTheStartNamingTheVariableAndTheAddress(t *testing.T) {
	refused := closedAddr(t)
	silent := silentAddr(t)
	for name, addr := range map[string]string{"refused": refused, "never answers": silent} {
		t.Run(name, func(t *testing.T) {
			localdevtest.IsolateEnv(t)
			endpoint := "http://" + addr
			t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
			t.Setenv("AWS_ACCESS_KEY_ID", "x")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
			done := make(chan error, 1)
			go func() { done <- run(context.Background(), io.Discard, nil) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL_DYNAMODB") || !strings.Contains(err.Error(), endpoint) {
					t.Fatalf("run = %v, want an error naming AWS_ENDPOINT_URL_DYNAMODB and %s", err, endpoint)
				}
			case <-time.After(testenv.Scaled(60 * time.Second)):
				t.Fatal("run did not give up on an unreachable endpoint within 60s")
			}
		})
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentAddr accepts connections and never answers, like a frozen server.
func silentAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln.Addr().String()
}

// Sets the environment and serverTimeouts, so not parallel.
func TestAClientSendingItsBodySlowlyIsCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	localdevtest.IsolateEnv(t)
	saved := serverTimeouts
	serverTimeouts.read = time.Second // the default 30s, shortened to keep the test quick
	t.Cleanup(func() { serverTimeouts = saved })

	ctx, cancel := context.WithCancel(context.Background())
	base, banner, done := startServer(t, ctx)
	t.Cleanup(func() { cancel(); <-done })
	clientID := localdevtest.BannerField(t, banner, `client id:\s+(\S+)`)
	secret := localdevtest.BannerField(t, banner, `secret:\s+(\S+)`)

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(testenv.Scaled(30 * time.Second)))
	const size = 200
	fmt.Fprintf(conn, "POST /v1/companies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"X-Service-Client-Id: %s\r\nX-Service-Api-Key: %s\r\nContent-Length: %d\r\n\r\n", clientID, secret, size)
	answered := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = "connection ended: " + err.Error()
		}
		answered <- line
	}()
	// One byte every 100ms: the whole body would take 20s.
	for sent := 0; sent < size; sent++ {
		select {
		case line := <-answered:
			t.Logf("cut off after %d of %d body bytes: %q", sent, size, line)
			return
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := conn.Write([]byte(" ")); err != nil {
			return // the server closed the connection
		}
	}
	t.Fatalf("the server read the whole slow body (%d bytes at 10 bytes/s) without cutting the client off", size)
}

func TestTheDevServerSweepsStaleRunsPeriodicallyUntilItStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan struct{}, 10)
	stopped := make(chan struct{})
	go func() {
		sweepPeriodically(ctx, func(context.Context) (int, error) {
			select {
			case calls <- struct{}{}:
			default:
			}
			return 1, nil
		}, 10*time.Millisecond)
		close(stopped)
	}()
	for range 2 {
		select {
		case <-calls:
		case <-time.After(testenv.Scaled(10 * time.Second)):
			t.Fatal("the sweep did not run periodically")
		}
	}
	cancel()
	select {
	case <-stopped:
	case <-time.After(testenv.Scaled(10 * time.Second)):
		t.Fatal("the sweep did not stop with its context")
	}
}

// An endpoint that answers, without credentials or refusing them, fails the
// start saying so: the endpoint is not the problem.
func TestADynamoDBEndpointWithoutOrRefusingCredentialsFailsTheStartSayingSo(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#UnrecognizedClientException","message":"The security token included in the request is invalid."}`)
	}))
	defer refusing.Close()
	for _, tc := range []struct {
		name        string
		credentials bool
		want        []string
	}{
		{"no credentials", false, []string{"no AWS credentials for the DynamoDB at " + refusing.URL, "AWS_ACCESS_KEY_ID"}},
		{"refused credentials", true, []string{"DynamoDB at " + refusing.URL, "refused the request: UnrecognizedClientException", "check the credentials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			localdevtest.IsolateEnv(t)
			t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", refusing.URL)
			if tc.credentials {
				t.Setenv("AWS_ACCESS_KEY_ID", "x")
				t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
			}
			err := run(context.Background(), io.Discard, nil)
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("run = %v, want an error saying %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "did not answer") {
				t.Errorf("run = %v: the endpoint answered", err)
			}
		})
	}
}
