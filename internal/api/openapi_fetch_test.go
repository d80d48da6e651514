package api_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
)

// fetchClient is a client of the service as a TypeScript user writes one
// with openapi-fetch over the types openapi-typescript makes of the
// published document: it lists companies with operator filters through
// POST /v1/companies/query (the GET list's deepObject filter is what such
// clients cannot send) and follows the cursor, typed under tsc --strict.
const fetchClient = `import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

const [baseUrl, clientId, apiKey] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { "X-Service-Client-Id": clientId, "X-Service-Api-Key": apiKey } });

type Query = components["schemas"]["CompanyQuery"];
const body: Query = {
  filter: { sector: { in: ["AI", "Robotics, Hardware"] }, canonicalName: { startsWith: "fetch" } },
  sort: [{ field: "canonicalName", direction: "asc" }],
  fields: ["canonicalName", "sector"],
  limit: 2,
};
// @ts-expect-error a sort key's direction is asc or desc
const wrong: Query = { sort: [{ field: "canonicalName", direction: "up" }] };

const names: string[] = [];
let cursor: string | undefined;
for (let page = 0; page < 10; page++) {
  const { data, error, response } = await client.POST("/v1/companies/query", { body: cursor ? { ...body, cursor } : body });
  if (error || !data) {
    throw new Error("query answered " + response.status + ": " + JSON.stringify(error));
  }
  for (const c of data.data) {
    names.push(String(c.canonicalName));
  }
  cursor = response.headers.get("X-Next-Cursor") ?? undefined;
  if (!cursor) {
    break;
  }
}
console.log(JSON.stringify(names));
export { wrong };
`

// TestAGeneratedTypeScriptClientSendsAnOperatorFilterThroughTheListQuery
// generates the document's types with openapi-typescript, compiles a
// client made with openapi-fetch (all pinned in package-lock.json) under
// tsc --strict and runs it against the service: its list query, with in,
// startsWith, a sort key and a cursor, answers what the service holds.
func TestAGeneratedTypeScriptClientSendsAnOperatorFilterThroughTheListQuery(t *testing.T) {
	testenv.Long(t, "runs the TypeScript compiler and node")
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "node_modules", ".bin")
	for _, tool := range []string{"openapi-typescript", "tsc"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			t.Fatalf("%s is not installed (%v): run make deps (npm ci installs it from package-lock.json)", tool, err)
		}
	}
	testinputs.Files("package-lock.json", "docs/openapi.json")
	e := apitest.New(t)
	c := e.Org(t)
	for _, co := range []map[string]any{
		{"canonicalName": "Fetch Alpha", "sector": "AI"}, {"canonicalName": "Fetch Beta", "sector": "Robotics, Hardware"},
		{"canonicalName": "Fetch Gamma", "sector": "AI"}, {"canonicalName": "Fetch Delta", "sector": "Fintech"},
		{"canonicalName": "Other", "sector": "AI"},
	} {
		c.Do("POST", "/v1/companies", co).Want(t, 201)
	}

	// The client's directory sees the repository's node_modules, as a
	// project of its own would see its installed packages.
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(bin, "openapi-typescript"), openAPIFile, "--output", filepath.Join(dir, "schema.d.ts")).CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript docs/openapi.json: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type": "module"}`), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "client.ts"), []byte(fetchClient), 0o644); err != nil {
		t.Fatal(err)
	}
	tsc := exec.Command(filepath.Join(bin, "tsc"), "--strict", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler",
		"--types", "node", "--skipLibCheck", "client.ts")
	tsc.Dir = dir
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc --strict of an openapi-fetch client of docs/openapi.json: %v\n%s", err, out)
	}
	node := exec.Command("node", "client.js", e.URL, c.ClientID, c.Secret)
	node.Dir = dir
	out, err := node.CombinedOutput()
	if err != nil {
		t.Fatalf("the openapi-fetch client: %v\n%s", err, out)
	}
	var names []string
	if err := json.Unmarshal(out, &names); err != nil {
		t.Fatalf("the client printed %s", out)
	}
	if want := []string{"Fetch Alpha", "Fetch Beta", "Fetch Gamma"}; !slices.Equal(names, want) {
		t.Errorf("the openapi-fetch client's query found %v, want %v", names, want)
	}
}
