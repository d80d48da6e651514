package dynamolocal

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/portowner"
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
	// A port bound but not listened on: nothing answers, and the JVM cannot
	// bind it.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	s, err = Start(context.Background(), Options{Port: sa.(*syscall.SockaddrInet4).Port})
	if !errors.Is(err, errPortTaken) {
		if s != nil {
			s.Stop()
		}
		t.Fatalf("Start on a port another socket is bound to: %v, want errPortTaken", err)
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

// DynamoDB Local has no option for its address and listens on every
// interface by itself; started here it listens on 127.0.0.1 only, and
// keeps the options it is started with (-sharedDb: every access key sees
// the same tables).
func TestDynamoDBLocalListensOnLoopbackOnly(t *testing.T) {
	s, err := Start(context.Background(), Options{SharedDB: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ls, err := portowner.Listeners(s.cmd.Process.Pid)
	if errors.Is(err, portowner.ErrNoProc) {
		t.Skip("no /proc to list the JVM's sockets from")
	}
	if err != nil {
		t.Fatal(err)
	}
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(s.Port))
	if len(ls) != 1 || ls[0].Addr != want {
		t.Errorf("DynamoDB Local listens on %v, want %s only", ls, want)
	}

	client := func(keyID string) *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint),
			Credentials: credentials.NewStaticCredentialsProvider(keyID, "x", "")})
	}
	ctx := context.Background()
	if _, err := client("a").CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("shared"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	if out, err := client("b").ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil || len(out.TableNames) != 1 {
		t.Errorf("another access key lists %v, %v; want the table (-sharedDb)", out, err)
	}
}
