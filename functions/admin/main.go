// Command admin is the operator's Lambda function, invoked directly (never
// through API Gateway) with an admin.Request event such as
// {"action":"create-org","name":"Acme Capital"}. The organization
// commands (export-org, restore-org, delete-org, list-orgs) reach the
// bulk files in BULK_BUCKET (or, under the local Lambda front, BULK_DIR).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/blob/s3blob"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() {
	service.Logger(os.Stdout)
	ctx := context.Background()
	st, cfg, err := service.StoreFromEnv(ctx, awsenv.Load)
	service.Must(err)
	var env admin.Env
	switch {
	case cfg.BulkBucket != "":
		awsCfg, err := awsenv.Load(ctx)
		service.Must(err)
		env.Files = s3blob.Listing(s3blob.New(s3.NewFromConfig(awsCfg), cfg.BulkBucket))
	case cfg.BulkDir != "":
		dir, err := blob.NewDir(cfg.BulkDir, "http://127.0.0.1")
		service.Must(err)
		env.Files = blob.ListDir(dir)
	}
	lambda.Start(admin.HandlerIn(st, env))
}
