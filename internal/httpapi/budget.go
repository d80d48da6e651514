package httpapi

import (
	"context"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/store"
)

// budgetKey is the context key of an answer's byte budget.
type budgetKey struct{}

// WithBudget makes n the byte budget of the answer a request with ctx
// gets (counted as ListBudget is): a lower one than ListBudget for a
// request whose answer is carried inside another (the REST call of an MCP
// tool, whose page the tool result repeats). A budget above ListBudget,
// or below 1, is ignored.
func WithBudget(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, budgetKey{}, n)
}

// Budget is the byte budget of the answer made in ctx: ListBudget, or
// the lower one WithBudget set. Lists and searches end their pages
// within it.
func Budget(ctx context.Context) int {
	if n, ok := ctx.Value(budgetKey{}).(int); ok && n > 0 && n < ListBudget {
		return n
	}
	return ListBudget
}

// countedKey marks a request already counted against its key's rate limit.
type countedKey struct{}

// WithCounted marks the requests made with ctx as already counted against
// the caller's rate limit: the REST call an MCP tool makes in process,
// whose JSON-RPC message /mcp counted. Authenticate still checks their
// credentials and does not count them again. Only code of the service can
// set it (a context value, not a header), so no client can skip its count.
func WithCounted(ctx context.Context) context.Context {
	return context.WithValue(ctx, countedKey{}, true)
}

// counted reports whether ctx is marked by WithCounted.
func counted(ctx context.Context) bool {
	v, _ := ctx.Value(countedKey{}).(bool)
	return v
}

// Fits measures the answer {"data": v} against the request's byte budget
// (Budget, counted as Lambda carries it): its size, the budget and
// whether it fits. An answer of many values without pages (a metric
// series, the records of a multi-get) is refused when it does not.
func Fits(r *http.Request, v any) (n, budget int, ok bool) {
	b, _ := Marshal(v)
	n, budget = store.WireSize(b)+len(`{"data":}`+"\n"), Budget(r.Context())
	return n, budget, n <= budget
}
