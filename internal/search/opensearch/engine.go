package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	osgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
	"github.com/opensearch-project/opensearch-go/v4/signer/awsv2"

	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/vectors"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The services a request is signed for (SigV4's service name).
const (
	ServiceServerless = "aoss" // Amazon OpenSearch Serverless (a collection)
	ServiceManaged    = "es"   // Amazon OpenSearch Service (a domain)
)

// Config says where the indexes are and how to reach them.
type Config struct {
	Endpoint    string // https://<collection or domain endpoint>
	Service     string // ServiceServerless or ServiceManaged
	IndexPrefix string // indexes are IndexName(IndexPrefix, resource)
	// AWS gives the region and the credentials requests are signed with.
	AWS aws.Config
	// Transport carries the requests (nil: Go's default).
	Transport http.RoundTripper
	// Keeper embeds the records' texts and hybrid searches' texts (nil:
	// EMBEDDINGS=off). Only a managed domain uses it (Semantic).
	Keeper *vectors.Keeper
}

// Client is a signed OpenSearch client over the resources' indexes.
type Client struct {
	api     *opensearchapi.Client
	prefix  string
	service string
}

// NewClient checks cfg and makes its client (it sends nothing).
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("opensearch: endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	if cfg.Service != ServiceServerless && cfg.Service != ServiceManaged {
		return nil, fmt.Errorf("opensearch: service %q is neither %s nor %s", cfg.Service, ServiceServerless, ServiceManaged)
	}
	if cfg.IndexPrefix == "" {
		return nil, errors.New("opensearch: empty index prefix")
	}
	sig, err := awsv2.NewSignerWithService(cfg.AWS, cfg.Service)
	if err != nil {
		return nil, fmt.Errorf("opensearch: signer: %w", err)
	}
	discover := false
	api, err := opensearchapi.NewClient(opensearchapi.Config{Client: osgo.Config{
		Addresses:            []string{strings.TrimSuffix(cfg.Endpoint, "/")},
		Signer:               sig,
		Transport:            cfg.Transport,
		DiscoverNodesOnStart: &discover,
	}})
	if err != nil {
		return nil, fmt.Errorf("opensearch: client: %w", err)
	}
	return &Client{api: api, prefix: cfg.IndexPrefix, service: cfg.Service}, nil
}

// Index is the index of a resource.
func (c *Client) Index(resource string) string { return IndexName(c.prefix, resource) }

// EnsureIndexes creates the index of each schema that does not exist yet,
// with its Mapping (with a vector field of dims dimensions when dims > 0).
// An existing index is left as it is (a changed mapping needs a new index
// and a reindex: see docs/search.md).
func (c *Client) EnsureIndexes(ctx context.Context, schemas []*search.Schema, dims int) error {
	for _, s := range schemas {
		body, err := Mapping(s, dims)
		if err != nil {
			return err
		}
		_, err = c.api.Indices.Create(ctx, opensearchapi.IndicesCreateReq{Index: c.Index(s.Resource), Body: bytes.NewReader(body)})
		if err != nil && errorType(err) != "resource_already_exists_exception" {
			return fmt.Errorf("opensearch: create index %s: %w", c.Index(s.Resource), err)
		}
	}
	return nil
}

// errorType is the OpenSearch error type of err ("" if it has none).
func errorType(err error) string {
	var se *osgo.StructError
	if errors.As(err, &se) {
		return se.Err.Type
	}
	return ""
}

// Engine answers searches from the OpenSearch indexes and the table:
// the index chooses and orders the page's ids (and counts the total), and
// the records are then read from the table, so each is the current one
// and a record deleted since it was indexed is left out. Filtering and
// ranking follow the index, which trails writes by the stream's delay.
type Engine struct {
	c      *Client
	st     *store.Store
	keeper *vectors.Keeper // nil: hybrid ranks by keywords, no similar records
}

// New returns an engine over cfg's indexes, reading records from st,
// ranking hybrid searches and similar records by meaning with cfg.Keeper
// where Semantic allows it.
func New(st *store.Store, cfg Config) (*Engine, error) {
	c, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Engine{c: c, st: st, keeper: semanticKeeper(cfg.Service, cfg.Keeper)}, nil
}

// NewEngine is New signing with awsCfg's region and credentials: the
// search function's engine (app.OpenSearchEngine).
func NewEngine(_ context.Context, awsCfg aws.Config, st *store.Store, keeper *vectors.Keeper, endpoint, service, indexPrefix string) (search.Engine, error) {
	return New(st, Config{Endpoint: endpoint, Service: service, IndexPrefix: indexPrefix, AWS: awsCfg, Keeper: keeper})
}

// Name names the engine in a list's X-Query-Plan.
func (e *Engine) Name() string { return "opensearch" }

// Search runs r over org's records of s: a hybrid search with text by
// keywords and meaning (hybrid), any other by keywords.
func (e *Engine) Search(ctx context.Context, org string, s *search.Schema, r *search.Request) (*search.Result, error) {
	if qv := e.keeper.SearchVector(ctx, r); qv != nil {
		res, err := e.hybrid(ctx, org, s, r, qv)
		var refused *knnRefused
		if !errors.As(err, &refused) {
			return res, err
		}
		slog.Warn("search: the k-NN query was refused (an index made without the vector field, or of another dimension, needs a new one: docs/search.md); ranking by keywords", "index", e.c.Index(s.Resource), "err", refused.err.Error())
	}
	body, err := Query(org, s, r)
	if err != nil {
		return nil, err
	}
	res, err := e.search(ctx, s, body)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return emptyResult(search.RankingKeyword), nil // nothing indexed yet
	}
	hits := e.hits(org, res)
	return e.result(ctx, org, s, hits.ids, res.Hits.Total.Value, search.RankingKeyword, nil)
}

// emptyResult is a result without records.
func emptyResult(ranking string) *search.Result {
	return &search.Result{Ranking: ranking, Records: []json.RawMessage{}}
}

// search runs one _search body on s's index: nil (and no error) when the
// index does not exist yet (nothing was indexed).
func (e *Engine) search(ctx context.Context, s *search.Schema, body []byte) (*opensearchapi.SearchResp, error) {
	res, err := e.c.api.Search(ctx, &opensearchapi.SearchReq{Indices: []string{e.c.Index(s.Resource)}, Body: bytes.NewReader(body)})
	if errorType(err) == "index_not_found_exception" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opensearch: search %s: %w", e.c.Index(s.Resource), err)
	}
	return res, nil
}

// hitList is the record ids of a search's hits, in order, and those whose
// document is pending (PendingField in its _source).
type hitList struct {
	ids     []string
	pending map[string]bool
}

// hits reads res's hits of org's records: a hit of another
// organization's document (which the OrgField filter never lets through)
// is dropped.
func (e *Engine) hits(org string, res *opensearchapi.SearchResp) hitList {
	out := hitList{ids: make([]string, 0, len(res.Hits.Hits))}
	for _, h := range res.Hits.Hits {
		id, ok := strings.CutPrefix(h.ID, org+":")
		if !ok {
			continue
		}
		out.ids = append(out.ids, id)
		var src struct {
			Pending bool `json:"_pending"`
		}
		if len(h.Source) > 0 && json.Unmarshal(h.Source, &src) == nil && src.Pending {
			if out.pending == nil {
				out.pending = map[string]bool{}
			}
			out.pending[id] = true
		}
	}
	return out
}

// result reads the records ids of org from the table, in order (a record
// deleted since it was indexed is left out), marked pending when one of
// them is in pending.
func (e *Engine) result(ctx context.Context, org string, s *search.Schema, ids []string, total int, ranking string, pending map[string]bool) (*search.Result, error) {
	out := emptyResult(ranking)
	out.Total = total
	for start := 0; start < len(ids); start += store.MaxBatch {
		recs, err := e.st.GetRecords(ctx, org, s.Type, ids[start:min(start+store.MaxBatch, len(ids))])
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			out.Records = append(out.Records, rec.Doc)
			out.Stamps = append(out.Stamps, rec.Stamp)
			if pending[rec.ID] {
				out.Semantic = search.SemanticPending
			}
		}
	}
	return out, nil
}

// NewStreamHandler is the indexer function's handler for the schemas,
// signing with awsCfg's region and credentials, embedding the records'
// texts with keeper (nil: EMBEDDINGS=off) where Semantic allows it
// (app.NewIndexer).
func NewStreamHandler(_ context.Context, awsCfg aws.Config, keeper *vectors.Keeper, endpoint, service, indexPrefix string, schemas []*search.Schema) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	c, err := NewClient(Config{Endpoint: endpoint, Service: service, IndexPrefix: indexPrefix, AWS: awsCfg})
	if err != nil {
		return nil, err
	}
	return NewIndexer(c, schemas, keeper).Handle, nil
}
