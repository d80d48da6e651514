package service

import (
	"context"
	"errors"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
)

// unqueued is the delivery queue of services built without one: a
// function that does not queue deliveries (Build's default; FromEnv sets
// SQS when DELIVER_QUEUE_URL is set, StartEvents a local queue).
type unqueued struct{}

func (unqueued) Send(context.Context, endpoints.Message) error {
	return apperr.Unavailable(errors.New("no delivery queue"), "this process cannot queue deliveries (%s is unset)", EnvDeliverQueueURL)
}

// Processor is the events function's code over deps: the stream's
// records into the history, their deliveries queued, and each event handed
// to also, when given (EventBridge: package app/eventfns).
func Processor(deps Deps, also func(context.Context, history.Derived) error) *history.Processor {
	publish := deps.Endpoints.Publish
	if also != nil {
		publish = func(ctx context.Context, d history.Derived) error {
			if err := also(ctx, d); err != nil {
				return err
			}
			return deps.Endpoints.Publish(ctx, d)
		}
	}
	p := &history.Processor{Catalog: deps.History.Catalog, History: deps.History, DeletedBy: deps.Store.DeletedBy, Publish: publish}
	if deps.Orgs != nil {
		// What an organization's deletion (admin delete-org) leaves in
		// the stream makes no events and no deliveries.
		p.Skip = func(ctx context.Context, org string) (bool, error) {
			st, err := deps.Orgs.Status(ctx, org)
			return st.Deleting, err
		}
	}
	return p
}

// orgStatus is what deliveries ask of their organization
// (endpoints.Service.OrgStatus): paused while it is suspended, dropped
// once its deletion began.
func orgStatus(orgs *apikeys.StatusCache) func(ctx context.Context, org string) (paused, gone bool, err error) {
	return func(ctx context.Context, org string) (bool, bool, error) {
		st, err := orgs.Status(ctx, org)
		return st.Suspended && !st.Deleting, st.Deleting, err
	}
}
