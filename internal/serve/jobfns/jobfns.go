// Package jobfns gives the Lambda functions that create or run bulk jobs
// (the data function, the runner) their jobs over S3 and the job state
// machine. It is a package of its own so that the other functions do not
// link S3's client.
package jobfns

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/blob/s3blob"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/service"
)

// FromEnv gives deps bulk jobs whose files are in BULK_BUCKET (or, run by
// the local Lambda front, BULK_DIR) and which start on
// JOBS_STATE_MACHINE_ARN (when set: the function creating exports; the
// runner only runs steps), reaching AWS as the function does. Without
// either, the function has no jobs: their routes answer 503.
func FromEnv(ctx context.Context, deps *service.Deps) error {
	cfg, err := service.ConfigFromEnv()
	if err != nil {
		return err
	}
	awsCfg, err := awsenv.Load(ctx)
	if err != nil {
		return err
	}
	var files blob.Store
	switch {
	case cfg.BulkBucket != "":
		files = s3blob.New(s3.NewFromConfig(awsCfg), cfg.BulkBucket)
	case cfg.BulkDir != "":
		dir, err := blob.NewDir(cfg.BulkDir, cfg.BulkFilesURL)
		if err != nil {
			return err
		}
		if dir.Secret, err = hex.DecodeString(cfg.BulkFilesSecret); err != nil || len(dir.Secret) < 16 {
			return fmt.Errorf("%s must be at least 16 bytes in hex", service.EnvBulkFilesSecret)
		}
		files = dir
	default:
		slog.Warn("no bulk jobs: neither " + service.EnvBulkBucket + " nor " + service.EnvBulkDir + " is set")
		return nil
	}
	Use(deps, files, awsCfg, cfg)
	return nil
}

// Use gives deps bulk jobs over files, started on the state machine of cfg.
func Use(deps *service.Deps, files blob.Store, awsCfg aws.Config, cfg service.Config) {
	deps.Jobs = jobs.New(deps.Store, files, jobsapi.Targets(*deps))
	deps.Jobs.RowsPerSecond = cfg.ImportRowsPerSecond
	if deps.Limits != nil {
		deps.Jobs.Limits = deps.Limits // an import's rows count against its key's rate limit
	}
	if cfg.JobsStateMachineARN != "" {
		deps.Jobs.SetStarter(jobs.StepFunctions{Client: sfn.NewFromConfig(awsCfg), StateMachineARN: cfg.JobsStateMachineARN})
	}
}

// Option is FromEnv as an option of serve.Lambda and service.ServeRunner.
func Option(deps *service.Deps) { service.Must(FromEnv(context.Background(), deps)) }
