// Command admin is the operator's Lambda function, invoked directly (never
// through API Gateway) with an admin.Request event such as
// {"action":"create-org","name":"Acme Capital"}.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() {
	service.Logger(os.Stdout)
	st, _, err := service.StoreFromEnv(context.Background(), awsenv.Load)
	service.Must(err)
	lambda.Start(admin.Handler(st))
}
