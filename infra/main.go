// Command infra is the CDK for Go app of Sourcebase (cdk.json runs it):
// one stack per stage, built from the Go declarations of the service.
//
//	cdk synth -c stage=dev|prod [-c assets=../bin/lambda] [-c webhookConcurrency=10]
//	          [-c alarmEmails=a@example.com,b@example.com] [-c tracing=false]
//	          [-c traceSampleRate=0.05] [-c traceReservoir=1] [-c logRetentionDays=30]
//	          [-c search=opensearch [-c openSearchKind=serverless|domain]] [-c embeddings=bedrock|off] [-c embeddingModel=amazon.titan-embed-text-v2:0]
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

func main() {
	app := awscdk.NewApp(nil)
	_, err := build(app)
	if err == nil {
		app.Synth(nil)
	}
	jsii.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "\nerror: %v\n", err)
		os.Exit(1)
	}
}

// build adds the stack of the context's stage to app, with the cdk-nag
// AwsSolutions checks (their errors fail the synthesis).
func build(app awscdk.App) (*Stack, error) {
	o, err := OptionsFromContext(app.Node())
	if err != nil {
		return nil, err
	}
	st, err := NewStack(app, o)
	if err != nil {
		return nil, err
	}
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	return st, nil
}
