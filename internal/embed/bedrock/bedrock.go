// Package bedrock is the embedding provider of deployments: Amazon
// Bedrock's Titan Text Embeddings V2 through InvokeModel. It is a package
// of its own so that only the functions that embed (search, indexer) link
// Bedrock's runtime client.
package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/sourcebase/sourcebase/internal/embed"
)

// Titan Text Embeddings V2's limits: the dimensions it makes, and the
// most characters of one input (8,192 tokens; about 50,000 characters).
const (
	Dimensions        = 512 // of 256, 512 or 1024: the middle, as AWS recommends for retrieval
	MaxChars          = 50_000
	DefaultConcurrent = 8 // InvokeModel calls in flight for one Embed
)

// InvokeModelAPI is what Bedrock calls: bedrockruntime.Client's method.
type InvokeModelAPI interface {
	InvokeModel(ctx context.Context, in *bedrockruntime.InvokeModelInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

// Provider embeds with Titan Text Embeddings V2 through Bedrock's
// InvokeModel: one text a call (the model takes one), at most Concurrent
// calls at once. The client's retryer retries throttling
// (ThrottlingException) and 5xx answers with backoff; an error that
// remains embeds nothing, and the caller keeps the record searchable by
// keyword until a later attempt.
type Provider struct {
	Client InvokeModelAPI
	// ModelID is TitanV2 unless set.
	ModelID string
	// Concurrent bounds the calls in flight (DefaultConcurrent when 0).
	Concurrent int
}

// titanRequest is InvokeModel's body for Titan Text Embeddings V2.
type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions"`
	Normalize  bool   `json:"normalize"`
}

// titanResponse is its answer.
type titanResponse struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

func (b *Provider) model() string {
	if b.ModelID != "" {
		return b.ModelID
	}
	return embed.TitanV2
}

// Name is "bedrock:<model id>".
func (b *Provider) Name() string { return "bedrock:" + b.model() }

// Dimensions is Dimensions.
func (b *Provider) Dimensions() int { return Dimensions }

// Embed embeds each text with its own InvokeModel call, Concurrent at a
// time; the first error cancels the rest.
func (b *Provider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	n := b.Concurrent
	if n <= 0 {
		n = DefaultConcurrent
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, text := range texts {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			v, err := b.one(ctx, text)
			if err != nil {
				once.Do(func() { first = fmt.Errorf("embed text %d of %d: %w", i+1, len(texts), err); cancel() })
				return
			}
			out[i] = v
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// one embeds one text.
func (b *Provider) one(ctx context.Context, text string) ([]float32, error) {
	body, err := json.Marshal(titanRequest{InputText: embed.Truncate(text, MaxChars), Dimensions: Dimensions, Normalize: true})
	if err != nil {
		return nil, err
	}
	res, err := b.Client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(b.model()),
		Body:        body,
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
	})
	if err != nil {
		return nil, err
	}
	var r titanResponse
	if err := json.Unmarshal(res.Body, &r); err != nil {
		return nil, fmt.Errorf("%s answered no embedding: %w", b.model(), err)
	}
	if len(r.Embedding) != Dimensions {
		return nil, fmt.Errorf("%s answered %d dimensions, want %d", b.model(), len(r.Embedding), Dimensions)
	}
	return unit(r.Embedding)
}

// errZero is a vector of no length, which has no direction.
var errZero = errors.New("the embedding is all zeros")

// unit is v scaled to length 1 (Titan normalizes; this holds any model
// to the Provider's promise).
func unit(v []float32) ([]float32, error) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return nil, errZero
	}
	n := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= n
	}
	return v, nil
}

// New is the provider of model (embed.TitanV2 when empty) through a
// client of awsCfg: service.NewBedrock.
func New(awsCfg aws.Config, model string) embed.Provider {
	return &Provider{Client: bedrockruntime.NewFromConfig(awsCfg), ModelID: model}
}
