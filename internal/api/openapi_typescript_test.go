package api_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// typeScriptUse uses the types openapi-typescript makes of the published
// document as a client would, under strict TypeScript: a field a record
// always has is its type (not `| undefined`), null only where the service
// can answer null; the multi-get of documents answers an array, the get
// one document; a free-form object holds any values; a company's
// enrichment holds typed candidates; a run's status is any string (its
// list is open) and its title may be missing (a run made before titles);
// the ids of a multi-get are one comma-separated string; a batch's
// operations are typed by their op.
const typeScriptUse = `import type { components, paths } from "./schema";

type Company = components["schemas"]["Company"];
declare const company: Company;
const id: string = company.id;
const name: string = company.canonicalName;
const origin: "user" | "workflow" = company.origin;
const tags: string[] = company.tags;
const website: string | null = company.website;
// @ts-expect-error a company's website may be null
const websiteText: string = company.website;
const custom: Company["custom"] = { anything: [1, "two"] };
const city: string | undefined = company.location.city;
const candidate = company.enrichment["sector"][0];
const candidateValue: string = candidate.value;
const candidateSource: string = candidate.source;
const candidateConfidence: number = candidate.confidence;
const candidatePinned: boolean = candidate.pinned;
const candidateDiscoveredAt: string = candidate.discoveredAt;

type Run = components["schemas"]["WorkflowRun"];
declare const run: Run;
const status: string = run.status;
const title: string | undefined = run.title;
const output: { [key: string]: unknown } | null = run.output;
const failedStep: string | undefined = run.error?.step;

type Workflow = components["schemas"]["Workflow"];
declare const workflow: Workflow;
const slug: string = workflow.trigger.slug;
const headerName: string | null = workflow.trigger.headerName;

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
	responses: { 200: { content: { "application/json": infer B } } };
} ? B : never;
declare const many: Json<"/v1/documents/ids={ids}", "get">;
const documents: components["schemas"]["Document"][] = many.data;
declare const one: Json<"/v1/documents/{id}", "get">;
const document: components["schemas"]["Document"] = one.data;
const documentName: string = document.name;
const ids: paths["/v1/documents/ids={ids}"]["get"]["parameters"]["path"]["ids"] = "doc_1,doc_2";

type BatchOperation = components["schemas"]["CompanyBatchCreate"] | components["schemas"]["CompanyBatchUpdate"] |
	components["schemas"]["CompanyBatchDelete"] | components["schemas"]["CompanyBatchUpsert"];
declare const operation: BatchOperation;
const updated: string | undefined = operation.op === "update" ? operation.id : undefined;
const create: components["schemas"]["CompanyBatchCreate"] = { op: "create", data: { canonicalName: "Acme" } };
// @ts-expect-error a create's op is "create"
const notCreate: components["schemas"]["CompanyBatchCreate"] = { op: "delete", data: {} };

export { id, name, origin, tags, website, websiteText, custom, city, candidateValue, candidateSource, candidateConfidence, candidatePinned,
	candidateDiscoveredAt, status, title, output, failedStep, slug, headerName, documents, documentName, ids, updated, create, notCreate };
`

// TestTheOpenAPIDocumentMakesStrictTypeScriptTypes generates TypeScript
// types of docs/openapi.json with openapi-typescript and compiles a use of
// them with tsc --strict (both pinned in package-lock.json).
func TestTheOpenAPIDocumentMakesStrictTypeScriptTypes(t *testing.T) {
	testenv.Long(t, "runs the TypeScript compiler")
	t.Parallel()
	bin := "../../node_modules/.bin/"
	for _, tool := range []string{"openapi-typescript", "tsc"} {
		if _, err := os.Stat(bin + tool); err != nil {
			t.Fatalf("%s is not installed (%v): run make deps (npm ci installs it from package-lock.json)", tool, err)
		}
	}
	dir := t.TempDir()
	testinputs.Files("package-lock.json", "docs/openapi.json")
	out, err := exec.Command(bin+"openapi-typescript", openAPIFile, "--output", filepath.Join(dir, "schema.d.ts")).CombinedOutput()
	if err != nil {
		t.Fatalf("openapi-typescript docs/openapi.json: %v\n%s", err, out)
	}
	use := filepath.Join(dir, "use.ts")
	if err := os.WriteFile(use, []byte(typeScriptUse), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin+"tsc", "--strict", "--noEmit", "--target", "es2022", "--module", "esnext",
		"--moduleResolution", "bundler", use).CombinedOutput()
	if err != nil {
		t.Errorf("tsc --strict of a use of the types openapi-typescript makes of docs/openapi.json: %v\n%s", err, out)
	}
}
