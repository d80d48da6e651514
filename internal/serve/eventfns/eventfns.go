// Package eventfns runs the change history's code: the events and deliver
// functions and the hooks function in AWS, and, in one local process (the
// dev server, the local Lambda front, the tests), the stream read through
// DynamoDB Local's Streams API with a queue in the process. Apart from
// package app so that the other functions do not link the Streams API's,
// SQS's and EventBridge's clients.
package eventfns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sourcebase/sourcebase/internal/awsenv"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/history/bus"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/outbound/sqsqueue"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/streams"
	"github.com/sourcebase/sourcebase/internal/streams/streamsapi"
)

// LocalEvents is the events function and the deliver function of one
// process (the dev server, the local Lambda front, the tests): the
// table's stream read through DynamoDB Local's Streams API, and a queue
// in the process.
type LocalEvents struct {
	Poller *streamsapi.Poller
	Queue  *endpoints.LocalQueue
	done   chan error
	cancel context.CancelFunc
	stop   sync.Once
}

// StartEvents starts reading the table's stream into deps' history and
// delivering to its endpoints, until Stop or ctx's end.
func StartEvents(ctx context.Context, deps service.Deps) *LocalEvents {
	ctx, cancel := context.WithCancel(ctx)
	q := &endpoints.LocalQueue{Attempt: deps.Endpoints.Attempt}
	q.Start(ctx)
	deps.Endpoints.SetQueue(q)
	p := &streamsapi.Poller{Streams: streamsapi.ClientOf(deps.Store.DB), DB: deps.Store.DB, Table: deps.Store.Table,
		Handle: service.Processor(deps, nil).Handle}
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

// ServeEvents runs the events function: the table's stream (new and old
// images, ReportBatchItemFailures, bisected on error) into the history,
// deliveries queued on DELIVER_QUEUE_URL, and, with EVENT_BUS_NAME, the
// events of the organizations that asked for it put on that bus.
func ServeEvents() {
	deps, cfg, awsCfg := start()
	if cfg.DeliverQueueURL == "" {
		service.Must(fmt.Errorf("the events function needs %s", service.EnvDeliverQueueURL))
	}
	var also func(context.Context, history.Derived) error
	if cfg.EventBusName != "" {
		b := &bus.Bridge{Client: eventbridge.NewFromConfig(awsCfg), Bus: cfg.EventBusName, Enabled: deps.Keys.EventBridge}
		also = b.Publish
	}
	lambda.Start(streams.Lambda(service.Processor(deps, also).Handle))
}

// ServeDeliver runs the deliver function: the delivery queue's batches,
// attempted in order, retries scheduled by the messages' visibility,
// exhausted ones moved to DELIVER_DLQ_URL.
func ServeDeliver() {
	deps, cfg, awsCfg := start()
	if cfg.DeliverQueueURL == "" || cfg.DeliverDLQURL == "" {
		service.Must(fmt.Errorf("the deliver function needs %s and %s", service.EnvDeliverQueueURL, service.EnvDeliverDLQURL))
	}
	lambda.Start(sqsqueue.Handler(deps.Endpoints, sqs.NewFromConfig(awsCfg), cfg.DeliverQueueURL, cfg.DeliverDLQURL))
}

// HooksDeps are the services of the hooks function (the change history
// and the webhook endpoints' routes, which serve.Deps serves): as
// serve.Lambda's, with the delivery queue of DELIVER_QUEUE_URL for
// manual retries.
func HooksDeps() service.Deps {
	deps, _, _ := start()
	return deps
}

// start reads the configuration of a function that queues or takes
// deliveries, with its delivery queue (SQS) when DELIVER_QUEUE_URL names
// one.
func start() (service.Deps, service.Config, aws.Config) {
	service.SizeToCPU()
	service.Logger(os.Stdout)
	deps, cfg, awsCfg, err := service.FromEnv(context.Background(), awsenv.Load)
	service.Must(err)
	if cfg.DeliverQueueURL != "" {
		deps.Endpoints.SetQueue(sqsqueue.Queue{Client: sqs.NewFromConfig(awsCfg), URL: cfg.DeliverQueueURL})
	}
	return deps, cfg, awsCfg
}
