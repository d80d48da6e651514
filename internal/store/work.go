package store

import (
	"context"
	"sync/atomic"
)

// Work counts what a request's reads cost beyond what it answers: the
// records (and log entries) DynamoDB read for it that it did not return,
// passed over by an offset, refused by a filter evaluated on the records
// read, or ordered in memory and left off the page. A list that reads
// little beyond its page counts none; a list whose filter no index
// serves counts every record it scanned. The HTTP layer charges the
// request's rate limits for it (RecordsPerRequest).
type Work struct{ passed atomic.Int64 }

// RecordsPerRequest is how many records a request may read and not
// return for each request its rate limits count: a list that passes over
// 1,000 records counts as 11 requests (its own and 10 more).
const RecordsPerRequest = 100

type workKey struct{}

// WithWork returns a context whose reads count into the returned Work.
func WithWork(ctx context.Context) (context.Context, *Work) {
	w := &Work{}
	return context.WithValue(ctx, workKey{}, w), w
}

// Passed is how many records the reads passed over so far.
func (w *Work) Passed() int64 { return w.passed.Load() }

// Requests is how many requests the work counts beyond the one that did
// it: one per RecordsPerRequest records passed over.
func (w *Work) Requests() int64 { return w.passed.Load() / RecordsPerRequest }

// passedOver counts n records read for ctx's request and not returned
// (a negative n takes back records counted before they were returned).
func passedOver(ctx context.Context, n int) {
	if w, ok := ctx.Value(workKey{}).(*Work); ok && n != 0 {
		w.passed.Add(int64(n))
	}
}
