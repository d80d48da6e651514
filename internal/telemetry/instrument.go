package telemetry

import (
	"context"
	"errors"
	"reflect"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/middleware"
)

// instrumentID names the middleware Instrument adds.
const instrumentID = "SourcebaseTelemetry"

// Instrument adds the telemetry middleware to an AWS SDK client's stack
// (an aws.Config's or a client's APIOptions); adding it twice is a no-op.
// Around each call (once, however often the SDK retries it) it sends an
// X-Ray subsegment of the call (service, operation, table, the AWS request
// id, the outcome) when the context's trace is sampled.
func Instrument(s *middleware.Stack) error {
	if _, ok := s.Initialize.Get(instrumentID); ok {
		return nil
	}
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc(instrumentID, instrument), middleware.After)
}

func instrument(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	ctx, seg := Start(ctx, awsmiddleware.GetServiceID(ctx))
	out, md, err := next.HandleInitialize(ctx, in)
	if seg != nil {
		seg.call(ctx, in.Parameters, md, err)
	}
	return out, md, err
}

// call records an AWS call on s, as the X-Ray SDKs do, and sends it.
func (s *Segment) call(ctx context.Context, params any, md middleware.Metadata, err error) {
	s.mu.Lock()
	s.doc.Namespace = "aws"
	a := map[string]any{"operation": awsmiddleware.GetOperationName(ctx), "region": awsmiddleware.GetRegion(ctx)}
	if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
		a["request_id"] = id
	}
	if t := tableName(params); t != "" {
		a["table_name"] = t
	}
	s.doc.AWS = a
	status := 200
	var re *awshttp.ResponseError
	switch {
	case errors.As(err, &re):
		status = re.HTTPStatusCode()
	case err != nil:
		status = 0
		s.doc.Fault = true // no answer: a timeout, a refused connection
	}
	if status != 0 {
		s.doc.HTTP = &segmentHTTP{Response: &httpResponse{Status: status}}
		s.mark(status)
	}
	s.mu.Unlock()
	s.End()
}

// tableName is a call input's TableName, when it has one.
func tableName(params any) string {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	f := v.Elem().FieldByName("TableName")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
		return ""
	}
	return f.Elem().String()
}
