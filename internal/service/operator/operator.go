// Package operator opens the service's table with the SDK's full AWS
// configuration chain (config.LoadDefaultConfig: environment, shared
// config and credentials files, profiles, SSO): for commands operators run
// on their machines (the dev server, the CLI, sam local's seeding). The
// Lambda functions use package awsenv instead, so that they do not link
// this chain.
package operator

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Load is the SDK's full chain, as an app.AWSLoader.
func Load(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return cfg, fmt.Errorf("load AWS configuration: %w", err)
	}
	return cfg, nil
}

// StoreFromEnv is app.StoreFromEnv through the SDK's full chain.
func StoreFromEnv(ctx context.Context) (*store.Store, service.Config, error) {
	return service.StoreFromEnv(ctx, Load)
}
