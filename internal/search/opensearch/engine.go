package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
}

// Client is a signed OpenSearch client over the resources' indexes.
type Client struct {
	api    *opensearchapi.Client
	prefix string
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
	return &Client{api: api, prefix: cfg.IndexPrefix}, nil
}

// Index is the index of a resource.
func (c *Client) Index(resource string) string { return IndexName(c.prefix, resource) }

// EnsureIndexes creates the index of each schema that does not exist yet,
// with its Mapping. An existing index is left as it is (a changed mapping
// needs a new index and a reindex: see docs/search.md).
func (c *Client) EnsureIndexes(ctx context.Context, schemas []*search.Schema) error {
	for _, s := range schemas {
		body, err := Mapping(s)
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
	c  *Client
	st *store.Store
}

// New returns an engine over cfg's indexes, reading records from st.
func New(st *store.Store, cfg Config) (*Engine, error) {
	c, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Engine{c: c, st: st}, nil
}

// NewEngine is New signing with awsCfg's region and credentials: the
// search function's engine (app.OpenSearchEngine).
func NewEngine(_ context.Context, awsCfg aws.Config, st *store.Store, _ *vectors.Keeper, endpoint, service, indexPrefix string) (search.Engine, error) {
	return New(st, Config{Endpoint: endpoint, Service: service, IndexPrefix: indexPrefix, AWS: awsCfg})
}

// Name names the engine in a list's X-Query-Plan.
func (e *Engine) Name() string { return "opensearch" }

// Similar answers the records nearest by meaning to record id: not yet
// served by this engine (issue 50 in progress).
func (e *Engine) Similar(context.Context, string, *search.Schema, string, *search.Request) (*search.Result, error) {
	return nil, search.ErrSemanticOff
}

// Search runs r over org's records of s.
func (e *Engine) Search(ctx context.Context, org string, s *search.Schema, r *search.Request) (*search.Result, error) {
	body, err := Query(org, s, r)
	if err != nil {
		return nil, err
	}
	out := &search.Result{Ranking: search.RankingKeyword, Records: []json.RawMessage{}}
	res, err := e.c.api.Search(ctx, &opensearchapi.SearchReq{Indices: []string{e.c.Index(s.Resource)}, Body: bytes.NewReader(body)})
	if errorType(err) == "index_not_found_exception" {
		return out, nil // nothing indexed yet
	}
	if err != nil {
		return nil, fmt.Errorf("opensearch: search %s: %w", e.c.Index(s.Resource), err)
	}
	out.Total = res.Hits.Total.Value
	ids := make([]string, 0, len(res.Hits.Hits))
	for _, h := range res.Hits.Hits {
		if id, ok := strings.CutPrefix(h.ID, org+":"); ok {
			ids = append(ids, id)
		}
	}
	for start := 0; start < len(ids); start += store.MaxBatch {
		recs, err := e.st.GetRecords(ctx, org, s.Type, ids[start:min(start+store.MaxBatch, len(ids))])
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			out.Records = append(out.Records, rec.Doc)
			out.Stamps = append(out.Stamps, rec.Stamp)
		}
	}
	return out, nil
}

// NewStreamHandler is the indexer function's handler for the schemas,
// signing with awsCfg's region and credentials (app.NewIndexer).
func NewStreamHandler(_ context.Context, awsCfg aws.Config, endpoint, service, indexPrefix string, schemas []*search.Schema) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	c, err := NewClient(Config{Endpoint: endpoint, Service: service, IndexPrefix: indexPrefix, AWS: awsCfg})
	if err != nil {
		return nil, err
	}
	return NewIndexer(c, schemas).Handle, nil
}
