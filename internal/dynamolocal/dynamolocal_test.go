package dynamolocal

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
)

func TestAPortAnotherServerAnswersOnIsNotTakenForDynamoDBLocal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler()} // as a Lambda emulator that took the port first
	go srv.Serve(ln)
	defer srv.Close()
	s, err := Start(context.Background(), Options{Port: ln.Addr().(*net.TCPAddr).Port})
	if !errors.Is(err, errPortTaken) {
		if s != nil {
			s.Stop()
		}
		t.Fatalf("Start on a port another server answers: %v, want errPortTaken", err)
	}
	// On a port of its own choosing it starts and answers as DynamoDB.
	s, err = Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !Answers(s.Endpoint) {
		t.Errorf("DynamoDB Local at %s does not answer as DynamoDB", s.Endpoint)
	}
}
