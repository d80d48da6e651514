// Package streamsapi reads a table's stream through the DynamoDB Streams API
// (DynamoDB Local's, locally) into streams.Records for a streams.Handler.
package streamsapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/sourcebase/sourcebase/internal/streams"
)

// Defaults and limits of a Poller.
const (
	// DefaultBatch is the number of records a GetRecords call asks for
	// when Poller.Batch is not set; MaxBatch is the most the API allows.
	DefaultBatch = 100
	MaxBatch     = 1000
	// DefaultIdle is how long a shard's reader pauses after a read that
	// found no new record, when Poller.Idle is not set.
	DefaultIdle = 200 * time.Millisecond

	// describeEvery is how often the stream is described to find new
	// shards (and at once after a shard ends, or when Caught asks).
	describeEvery = time.Second
	// Failed calls and failed handling are retried after an exponential
	// backoff: minBackoff, doubling up to maxBackoff.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// enableTimeout bounds the wait for a stream the Poller enabled.
	enableTimeout = 2 * time.Minute
	// enablePoll is the pause between two looks at a stream being enabled.
	enablePoll = 250 * time.Millisecond
)

// Poller reads a table's stream through the DynamoDB Streams API
// (DynamoDB Local's, or AWS's) and hands its records to Handle: the way
// the dev server gets, with the same processing code, what a Lambda
// function gets in AWS.
//
// Run starts every shard from its oldest record (TRIM_HORIZON; the
// processing is idempotent) and keeps each shard's position in memory
// only. Shards are read concurrently, one goroutine each, the records of
// a shard strictly in order; a child shard is read only once its parent
// has been read to its end, so the changes of one item come in order
// across shards too. When Handle stops short of a batch's end, the
// records from the first unhandled one on are handed again, after a
// backoff, before anything more is read: nothing is skipped.
//
// Logs name tables, shards, record ids and sequence numbers, never a
// record's contents.
//
// Its reads repair what DynamoDB Local 3.x gets wrong in stream records
// (empty maps; see repair.go), whichever way Streams was built.
type Poller struct {
	Streams *dynamodbstreams.Client
	// DB describes the table (for its latest stream) and enables the
	// stream, of new and old images, on a table made without one.
	DB     *dynamodb.Client
	Table  string
	Batch  int           // records per GetRecords call: DefaultBatch when 0, at most MaxBatch
	Idle   time.Duration // pause after a read that found nothing new: DefaultIdle when 0
	Handle streams.Handler
	Log    *slog.Logger // nil: slog.Default()

	setup   sync.Once
	epoch   atomic.Int64  // counts Caught calls: a read started at epoch e began after the e-th call
	kick    chan struct{} // (buffered) asks Run to describe the stream now
	mu      sync.Mutex
	running bool
	shards  map[string]*shard // the current stream's, by id
	// described is the epoch at which the latest complete description
	// of the current stream began.
	described int64
	changed   chan struct{} // closed (and replaced) when shards or described change
	wake      chan struct{} // closed (and replaced) by Caught: idle readers read at once
}

// shard is what a Poller knows of one shard of the stream.
type shard struct {
	id, parent string
	started    bool // a reader reads it
	done       bool // closed and read to its end, every record handled (or gone)
	// emptyAt is the epoch at which the latest read that found nothing
	// new began, every record before it handled.
	emptyAt int64
}

// init makes the Poller's channels and map, on first use.
func (p *Poller) init() {
	p.setup.Do(func() {
		p.kick = make(chan struct{}, 1)
		p.changed = make(chan struct{})
		p.wake = make(chan struct{})
		p.shards = map[string]*shard{}
	})
}

// Run reads the stream until ctx is done, and returns ctx.Err() then,
// once every reader has stopped. It returns another error only for a
// Poller that lacks a client, the table's name or Handle, or that is
// already running. Failed calls are logged and retried with a backoff.
//
// Run first finds the table's latest stream; a table without one gets one
// (of new and old images: UpdateTable), which Run logs. When the stream
// is disabled, Run reads its shards to their ends and then moves to the
// table's new stream (enabling one when there is none).
func (p *Poller) Run(ctx context.Context) error {
	if err := p.check(); err != nil {
		return err
	}
	p.init()
	p.mu.Lock()
	if p.running {
		p.mu.Unlock()
		return errors.New("streams: Poller.Run is already running")
	}
	p.running = true
	p.resetLocked()
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = false
		p.mu.Unlock()
	}()

	var (
		wg  sync.WaitGroup
		cur stream
		bo  backoff
	)
	defer func() {
		cur.stop()
		wg.Wait()
	}()
	for {
		wait := describeEvery
		if err := p.round(ctx, &cur, &wg); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			wait = bo.next()
			p.log().Warn("streams: reading the stream failed; retrying", "table", p.Table, "stream", cur.arn, "retry_in", wait, "error", err)
		} else {
			bo.reset()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		case <-p.kick:
			t.Stop()
		}
	}
}

// check reports what Run cannot do without.
func (p *Poller) check() error {
	switch {
	case p.Streams == nil:
		return errors.New("streams: Poller.Streams is nil")
	case p.DB == nil:
		return errors.New("streams: Poller.DB is nil")
	case p.Table == "":
		return errors.New("streams: Poller.Table is empty")
	case p.Handle == nil:
		return errors.New("streams: Poller.Handle is nil")
	}
	return nil
}

// stream is the stream Run reads: its ARN and the context of its readers.
type stream struct {
	arn    string
	ctx    context.Context
	cancel context.CancelFunc
}

// stop stops the stream's readers, if any.
func (s *stream) stop() {
	if s.cancel != nil {
		s.cancel()
	}
}

// round is one turn of Run: it finds the stream if need be, describes it,
// and starts the readers of the shards that may be read now.
func (p *Poller) round(ctx context.Context, cur *stream, wg *sync.WaitGroup) error {
	if cur.arn == "" {
		arn, err := p.streamARN(ctx)
		if err != nil {
			return err
		}
		sctx, cancel := context.WithCancel(ctx)
		*cur = stream{arn: arn, ctx: sctx, cancel: cancel}
		p.mu.Lock()
		p.resetLocked()
		p.mu.Unlock()
	}
	epoch := p.epoch.Load()
	status, shards, err := p.describeStream(ctx, cur.arn)
	var gone *streamtypes.ResourceNotFoundException
	switch {
	case errors.As(err, &gone):
		// Deleted with its table, or expired a day after being disabled:
		// there is nothing left to read in it.
		p.log().Warn("streams: the stream no longer exists; looking for the table's stream", "table", p.Table, "stream", cur.arn)
		cur.stop()
		*cur = stream{}
		return err
	case err != nil:
		return err
	}
	allDone := p.update(*cur, wg, shards, epoch)
	if allDone && (status == streamtypes.StreamStatusDisabled || status == streamtypes.StreamStatusDisabling) {
		p.log().Warn("streams: the stream is disabled and read to its end; looking for the table's stream", "table", p.Table, "stream", cur.arn)
		cur.stop()
		*cur = stream{}
		p.poke()
	}
	return nil
}

// resetLocked forgets the shards of the previous stream.
func (p *Poller) resetLocked() {
	p.shards = map[string]*shard{}
	p.described = 0
	p.broadcastLocked()
}

// describeStream returns the stream's status and all its shards, page by
// page.
func (p *Poller) describeStream(ctx context.Context, arn string) (streamtypes.StreamStatus, []streamtypes.Shard, error) {
	var (
		shards []streamtypes.Shard
		start  *string
	)
	for {
		out, err := p.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start})
		if err != nil {
			return "", nil, fmt.Errorf("describe stream: %w", err)
		}
		d := out.StreamDescription
		if d == nil {
			return "", nil, errors.New("describe stream: no description in the answer")
		}
		shards = append(shards, d.Shards...)
		if start = d.LastEvaluatedShardId; aws.ToString(start) == "" {
			return d.StreamStatus, shards, nil
		}
	}
}

// update records a description of the stream that began at epoch, starts
// a reader on each shard that may be read now (never read, and its parent
// read to its end or no longer known), and reports whether every shard
// has been read to its end.
func (p *Poller) update(cur stream, wg *sync.WaitGroup, described []streamtypes.Shard, epoch int64) (allDone bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	present := make(map[string]bool, len(described))
	for _, d := range described {
		id := aws.ToString(d.ShardId)
		present[id] = true
		if p.shards[id] == nil {
			p.shards[id] = &shard{id: id, parent: aws.ToString(d.ParentShardId)}
		}
	}
	// A shard trimmed from the description is forgotten, unless it is
	// still being read: its children wait for it then.
	for id, s := range p.shards {
		if !present[id] && (s.done || !s.started) {
			delete(p.shards, id)
		}
	}
	for _, d := range described {
		s := p.shards[aws.ToString(d.ShardId)]
		if parent := p.shards[s.parent]; !s.started && (parent == nil || parent.done) {
			s.started = true
			wg.Go(func() { p.read(cur.ctx, cur.arn, s) })
		}
	}
	allDone = true
	for _, s := range p.shards {
		allDone = allDone && s.done
	}
	p.described = epoch
	p.broadcastLocked()
	return allDone
}

// streamARN returns the table's latest stream, enabling one (new and old
// images) when the table has none.
func (p *Poller) streamARN(ctx context.Context) (string, error) {
	t, err := p.describeTable(ctx)
	if err != nil {
		return "", err
	}
	if arn, ok := p.enabled(t); ok {
		return arn, nil
	}
	_, err = p.DB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(p.Table),
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	})
	if err != nil {
		// Another process may have enabled it meanwhile (DynamoDB then
		// answers ValidationException).
		if t, err2 := p.describeTable(ctx); err2 == nil {
			if arn, ok := p.enabled(t); ok {
				return arn, nil
			}
		}
		return "", fmt.Errorf("enable the stream of table %q: %w", p.Table, err)
	}
	ctx, cancel := context.WithTimeout(ctx, enableTimeout)
	defer cancel()
	for {
		t, err := p.describeTable(ctx)
		if err != nil {
			return "", err
		}
		if arn, ok := p.enabled(t); ok && t.TableStatus == types.TableStatusActive {
			p.log().Warn("streams: the table had no stream; enabled one of new and old images", "table", p.Table, "stream", arn)
			return arn, nil
		}
		if err := sleep(ctx, enablePoll); err != nil {
			return "", fmt.Errorf("wait for the stream of table %q: %w", p.Table, err)
		}
	}
}

// describeTable describes the table.
func (p *Poller) describeTable(ctx context.Context) (*types.TableDescription, error) {
	out, err := p.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(p.Table)})
	if err != nil {
		return nil, fmt.Errorf("describe table %q: %w", p.Table, err)
	}
	if out.Table == nil {
		return nil, fmt.Errorf("describe table %q: no description in the answer", p.Table)
	}
	return out.Table, nil
}

// enabled returns the table's stream when it is enabled, warning when its
// records lack an image the Handler expects.
func (p *Poller) enabled(t *types.TableDescription) (string, bool) {
	arn, spec := aws.ToString(t.LatestStreamArn), t.StreamSpecification
	if arn == "" || spec == nil || !aws.ToBool(spec.StreamEnabled) {
		return "", false
	}
	if spec.StreamViewType != types.StreamViewTypeNewAndOldImages {
		p.log().Warn("streams: the table's stream does not hold new and old images; records will lack them", "table", p.Table, "stream", arn, "view", spec.StreamViewType)
	}
	return arn, true
}

// read reads one shard until it ends (or ctx is done), then marks it done
// and has Run look for its children.
func (p *Poller) read(ctx context.Context, arn string, s *shard) {
	r := &reader{p: p, arn: arn, shard: s}
	if err := r.run(ctx); err != nil {
		return // ctx is done
	}
	p.mu.Lock()
	s.done = true
	p.broadcastLocked()
	p.mu.Unlock()
	p.poke()
}

// reader reads one shard.
type reader struct {
	p     *Poller
	arn   string
	shard *shard
	last  string // sequence number of the last handled record; "" before the first
}

// run reads the shard to its end, handling every record in order. It
// returns nil once the shard is closed and read, or no longer exists, and
// ctx.Err() when ctx is done first.
func (r *reader) run(ctx context.Context) error {
	p := r.p
	var bo backoff
	it, err := r.iterator(ctx)
	for err == nil && it != "" {
		epoch := p.epoch.Load()
		out, readErr := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it), Limit: aws.Int32(int32(p.batch()))}, withEmptyMapRepair)
		if readErr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var (
				expired *streamtypes.ExpiredIteratorException
				trimmed *streamtypes.TrimmedDataAccessException
			)
			switch {
			case errors.As(readErr, &expired):
				// An iterator lasts 15 minutes: renew it where the reader is.
				p.log().Info("streams: shard iterator expired; renewing it", "table", p.Table, "shard", r.shard.id, "after", r.last)
			case errors.As(readErr, &trimmed):
				p.log().Warn("streams: records were trimmed before they were read; reading the shard from its oldest record", "table", p.Table, "shard", r.shard.id, "after", r.last, "error", readErr)
				r.last = ""
			default:
				// Throttled, unavailable, or an iterator the server no
				// longer knows (DynamoDB Local restarted): a new one after
				// the backoff.
				wait := bo.next()
				p.log().Warn("streams: reading a shard failed; retrying", "table", p.Table, "shard", r.shard.id, "after", r.last, "retry_in", wait, "error", readErr)
				if err := sleep(ctx, wait); err != nil {
					return err
				}
			}
			it, err = r.iterator(ctx)
			continue
		}
		bo.reset()
		if len(out.Records) > 0 {
			if err := r.deliver(ctx, FromStreams(out.Records)); err != nil {
				return err
			}
		}
		if out.NextShardIterator == nil {
			return nil // closed, and read to its end
		}
		it = *out.NextShardIterator
		if len(out.Records) == 0 {
			if err := p.pause(ctx, r.shard, epoch); err != nil {
				return err
			}
		}
	}
	return err
}

// iterator returns a new iterator at the reader's position: after the last
// handled record, or at the shard's oldest record. It returns "" when the
// shard no longer exists, and ctx.Err() when ctx is done first.
func (r *reader) iterator(ctx context.Context) (string, error) {
	p := r.p
	var bo backoff
	for {
		in := &dynamodbstreams.GetShardIteratorInput{
			StreamArn:         aws.String(r.arn),
			ShardId:           aws.String(r.shard.id),
			ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon,
		}
		if r.last != "" {
			in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(r.last)
		}
		out, err := p.Streams.GetShardIterator(ctx, in)
		if err == nil && aws.ToString(out.ShardIterator) != "" {
			return *out.ShardIterator, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var (
			gone    *streamtypes.ResourceNotFoundException
			trimmed *streamtypes.TrimmedDataAccessException
		)
		switch {
		case err == nil:
			err = errors.New("GetShardIterator answered no iterator")
		case errors.As(err, &gone):
			p.log().Warn("streams: the shard no longer exists; leaving it", "table", p.Table, "shard", r.shard.id, "after", r.last, "error", err)
			return "", nil
		case errors.As(err, &trimmed) && r.last != "":
			p.log().Warn("streams: records were trimmed before they were read; reading the shard from its oldest record", "table", p.Table, "shard", r.shard.id, "after", r.last, "error", err)
			r.last = ""
			continue
		}
		wait := bo.next()
		p.log().Warn("streams: getting a shard iterator failed; retrying", "table", p.Table, "shard", r.shard.id, "after", r.last, "retry_in", wait, "error", err)
		if err := sleep(ctx, wait); err != nil {
			return "", err
		}
	}
}

// deliver hands records to the Handler until it has handled them all,
// retrying from the first unhandled record after a backoff (reset by any
// progress). It returns only nil, or ctx.Err() when ctx is done first.
func (r *reader) deliver(ctx context.Context, records []streams.Record) error {
	p := r.p
	var bo backoff
	for {
		done, err := p.Handle(ctx, records)
		done = max(0, min(done, len(records)))
		if done > 0 {
			r.last = records[done-1].Sequence
			bo.reset()
		}
		if done == len(records) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			err = streams.ErrStopped
		}
		next, wait := records[done], bo.next()
		p.log().Error("streams: handler failed; retrying from the record", "table", p.Table, "shard", r.shard.id,
			"record", next.ID, "sequence", next.Sequence, "handled", done, "pending", len(records)-done, "retry_in", wait, "error", err)
		records = records[done:]
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// pause records that a read of s begun at epoch found nothing new, then
// waits Idle, or less when Caught is called.
func (p *Poller) pause(ctx context.Context, s *shard, epoch int64) error {
	p.mu.Lock()
	s.emptyAt = epoch
	p.broadcastLocked()
	wake := p.wake
	p.mu.Unlock()
	t := time.NewTimer(p.idle())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	case <-wake:
	}
	return nil
}

// Caught returns once every record that could be read from the stream
// when it was called has been handled: Run has described the stream
// since the call, and each shard listed that is not read to its end has
// had a read, begun since the call, find nothing new. It returns
// ctx.Err() if ctx is done first; without a running Run, it waits for
// that.
//
// With DynamoDB Local, where a change is readable from the stream as
// soon as the write returns, that is every change written before the call:
// tests and the dev server use it to wait for the processing of what they
// wrote. AWS makes a change readable only after a moment, and a read may
// find nothing while the shard holds more, so there it is only a hint.
func (p *Poller) Caught(ctx context.Context) error {
	p.init()
	mark := p.epoch.Add(1)
	p.mu.Lock()
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
	p.poke()
	for {
		p.mu.Lock()
		ok, changed := p.caughtLocked(mark), p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// caughtLocked reports whether the stream was described, and every shard
// not read to its end read without finding anything new, since epoch mark.
func (p *Poller) caughtLocked(mark int64) bool {
	if p.described < mark {
		return false
	}
	for _, s := range p.shards {
		if !s.done && s.emptyAt < mark {
			return false
		}
	}
	return true
}

// broadcastLocked wakes every Caught waiting for a change.
func (p *Poller) broadcastLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// poke asks Run to describe the stream now.
func (p *Poller) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *Poller) batch() int {
	if p.Batch <= 0 {
		return DefaultBatch
	}
	return min(p.Batch, MaxBatch)
}

func (p *Poller) idle() time.Duration {
	if p.Idle <= 0 {
		return DefaultIdle
	}
	return p.Idle
}

func (p *Poller) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

// backoff is an exponential backoff: minBackoff, doubling up to maxBackoff.
type backoff struct{ d time.Duration }

// next returns the next wait.
func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, minBackoff), maxBackoff)
	return b.d
}

// reset starts the backoff over.
func (b *backoff) reset() { b.d = 0 }

// sleep waits d, or less when ctx is done first (returning ctx.Err()).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
