package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/endpoints"
	"github.com/sourcebase/sourcebase/internal/events"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// unqueued is the delivery queue of services built without one: a
// function that does not queue deliveries (Build's default; FromEnv sets
// SQS when DELIVER_QUEUE_URL is set, StartEvents a local queue).
type unqueued struct{}

func (unqueued) Send(context.Context, endpoints.Message) error {
	return apperr.Unavailable(errors.New("no delivery queue"), "this process cannot queue deliveries (%s is unset)", EnvDeliverQueueURL)
}

// Processor is the events function's code over deps: the stream's
// records into the history, their deliveries queued, and, with bridge,
// the events of the organizations that asked for it published to
// EventBridge.
func Processor(deps api.Deps, bridge *events.Bridge) *events.Processor {
	publish := deps.Endpoints.Publish
	if bridge != nil {
		publish = func(ctx context.Context, d events.Derived) error {
			if err := bridge.Publish(ctx, d); err != nil {
				return err
			}
			return deps.Endpoints.Publish(ctx, d)
		}
	}
	return &events.Processor{Catalog: deps.History.Catalog, History: deps.History, DeletedBy: deps.Store.DeletedBy, Publish: publish}
}

// LocalEvents is the events function and the deliver function of one
// process (the dev server, the local Lambda front, the tests): the
// table's stream read through DynamoDB Local's Streams API, and a queue
// in the process.
type LocalEvents struct {
	Poller *streams.Poller
	Queue  *endpoints.LocalQueue
	done   chan error
	cancel context.CancelFunc
	stop   sync.Once
}

// StartEvents starts reading the table's stream into deps' history and
// delivering to its endpoints, until Stop or ctx's end.
func StartEvents(ctx context.Context, deps api.Deps) *LocalEvents {
	ctx, cancel := context.WithCancel(ctx)
	q := &endpoints.LocalQueue{Attempt: deps.Endpoints.Attempt}
	q.Start(ctx)
	deps.Endpoints.SetQueue(q)
	p := &streams.Poller{Streams: streamsClientOf(deps.Store), DB: deps.Store.DB, Table: deps.Store.Table,
		Handle: Processor(deps, nil).Handle}
	le := &LocalEvents{Poller: p, Queue: q, done: make(chan error, 1), cancel: cancel}
	go func() {
		err := p.Run(ctx)
		if err != nil && !errors.Is(err, context.Canceled) {
			slog.Error("the table's stream can no longer be read: no more events", "error", err)
		}
		le.done <- err
	}()
	return le
}

// Stop ends the reading and the deliveries.
func (le *LocalEvents) Stop() {
	le.stop.Do(func() {
		le.cancel()
		<-le.done
	})
}

// Caught returns once every change written before the call is in the
// history and its deliveries queued.
func (le *LocalEvents) Caught(ctx context.Context) error { return le.Poller.Caught(ctx) }

// streamsClientOf is a Streams client reaching where st's DynamoDB client
// does, with its credentials (DynamoDB Local serves both APIs).
func streamsClientOf(st *store.Store) *dynamodbstreams.Client {
	o := st.DB.Options()
	return dynamodbstreams.New(dynamodbstreams.Options{Region: o.Region, Credentials: o.Credentials,
		BaseEndpoint: o.BaseEndpoint, HTTPClient: o.HTTPClient, RetryMaxAttempts: o.RetryMaxAttempts})
}

// ServeEvents runs the events function: the table's stream (new and old
// images, ReportBatchItemFailures, bisected on error) into the history,
// deliveries queued on DELIVER_QUEUE_URL.
func ServeEvents() {
	sizeToCPU()
	Logger(os.Stdout)
	deps, cfg, awsCfg, err := FromEnv(context.Background(), awsenv.Load)
	Must(err)
	if cfg.DeliverQueueURL == "" {
		Must(fmt.Errorf("the events function needs %s", EnvDeliverQueueURL))
	}
	var bridge *events.Bridge
	if cfg.EventBusName != "" {
		bridge = &events.Bridge{Client: eventbridge.NewFromConfig(awsCfg), Bus: cfg.EventBusName, Enabled: deps.Keys.EventBridge}
	}
	lambda.Start(streams.Lambda(Processor(deps, bridge).Handle))
}

// ServeDeliver runs the deliver function: the delivery queue's batches,
// attempted in order, retries scheduled by the messages' visibility,
// exhausted ones moved to DELIVER_DLQ_URL.
func ServeDeliver() {
	sizeToCPU()
	Logger(os.Stdout)
	deps, cfg, awsCfg, err := FromEnv(context.Background(), awsenv.Load)
	Must(err)
	if cfg.DeliverQueueURL == "" || cfg.DeliverDLQURL == "" {
		Must(fmt.Errorf("the deliver function needs %s and %s", EnvDeliverQueueURL, EnvDeliverDLQURL))
	}
	lambda.Start(endpoints.SQSHandler(deps.Endpoints, sqs.NewFromConfig(awsCfg), cfg.DeliverQueueURL, cfg.DeliverDLQURL))
}
