package mcpserver

import (
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// Resources are the resources the MCP tools read and search: companies,
// then every declared resource with MCP set, in declaration order.
func Resources() []*resource.Def {
	out := []*resource.Def{companies.Def}
	for _, d := range resources.All() {
		if d.MCP {
			out = append(out, d)
		}
	}
	return out
}

// resourceNames are the names of Resources, for the server's instructions.
func resourceNames() string {
	var names []string
	for _, d := range Resources() {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// Tools are the MCP server's tools: operations of the OpenAPI document,
// generated for Resources from their declarations and routes (search_<name>,
// or list_<name> when the resource has no search, and get_<singular>), then
// enrichment, metric series, workflows and runs.
func Tools() []ToolSpec {
	var out []ToolSpec
	for _, d := range Resources() {
		name := d.Name
		snake := strings.ReplaceAll(d.Singular, " ", "_")
		if d.Searchable {
			out = append(out, ToolSpec{Name: "search_" + name, OperationID: openapi.OperationID(http.MethodPost, "/v1/"+name+"/search"),
				Description: "Search the organization's " + name + ": text, structured filters (and/or of field conditions), sort, pages. " +
					"Answers the " + name + " as GET answers them, with paging metadata."})
		} else {
			out = append(out, ToolSpec{Name: "list_" + name, OperationID: openapi.OperationID(http.MethodGet, "/v1/"+name),
				Description: "List the organization's " + name + ", newest first, optionally filtered by one field; follow nextCursor with cursor."})
		}
		out = append(out, ToolSpec{Name: "get_" + snake, OperationID: openapi.OperationID(http.MethodGet, "/v1/"+name+"/{id}"),
			Description: "Get one " + d.Singular + " by id. " + d.Doc})
	}
	return append(out,
		ToolSpec{Name: "get_enrichment_candidates", OperationID: openapi.OperationID(http.MethodGet, "/v1/enrichments/resources/{resourceType}/{resourceId}"),
			Description: "List the candidate values of a record's enrichable attributes (resourceType companies), by property and rank, with source, confidence and pin; follow nextCursor with cursor. The record's own attributes hold the winners."},
		ToolSpec{Name: "read_metric_series", OperationID: openapi.OperationID(http.MethodPost, "/v1/data/metric-series"),
			Description: "Read a metric series of a record (resource companies:<id>, key metric:<name>) over a period, bucketed by granularity and picked by a policy (latest, highest_confidence, all)."},
		ToolSpec{Name: "list_workflows", OperationID: openapi.OperationID(http.MethodGet, "/v1/workflows"),
			Description: "List the organization's workflows with their steps and webhook triggers (secrets are never shown)."},
		ToolSpec{Name: "start_workflow_run", OperationID: openapi.OperationID(http.MethodPost, "/v1/workflows/{id}/runs"),
			Description: "Start a run of a workflow with an input. It is a dry run (nothing written; company steps say what they would do) unless body.dryRun is false. Follow it with get_workflow_run.",
			Defaults:    map[string]any{"dryRun": true}},
		ToolSpec{Name: "get_workflow_run", OperationID: openapi.OperationID(http.MethodGet, "/v1/workflow-runs/{id}"),
			Description: "Get a workflow run: its status (queued, running, completed, failed), input, output or error."},
		ToolSpec{Name: "retry_workflow_run", OperationID: openapi.OperationID(http.MethodPost, "/v1/workflow-runs/{id}/retry"),
			Description: "Retry a failed run once: a new run with the same input and dry-run setting."},
	)
}
