package service

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/jobs"
)

// LocalJobs gives deps bulk jobs whose files live in the directory root,
// uploaded and downloaded through baseURL's blob.PathPrefix (FilesHandler
// serves them), and run by a runner of this process, which it returns
// (Close it) after resuming the jobs a previous process left unfinished:
// the dev server's and the tests' bulk jobs. targets are what the jobs
// move, over deps (jobsapi.Targets).
func LocalJobs(ctx context.Context, deps *Deps, root, baseURL string, targets func(Deps) []jobs.Target) (*jobs.Runner, *blob.Dir, error) {
	dir, err := blob.NewDir(root, baseURL)
	if err != nil {
		return nil, nil, err
	}
	deps.Jobs = jobs.New(deps.Store, dir, targets(*deps))
	if deps.Limits != nil {
		deps.Jobs.Limits = deps.Limits // an import's rows count against its key's rate limit
	}
	runner := jobs.NewRunner(deps.Jobs)
	svc := deps.Jobs
	dir.OnUpload = func(key string, size int64) {
		if org, _ := jobs.ParseUploadKey(key); org == "" {
			return
		}
		// The import starts now; its progress is read from the job.
		if _, err := svc.Uploaded(context.Background(), key, size, true); err != nil {
			slog.Error("start an uploaded import", "key", key, "err", err)
		}
	}
	if err := runner.Resume(ctx); err != nil {
		return nil, nil, err
	}
	return runner, dir, nil
}

// WithFiles serves the file store's URLs (blob.PathPrefix) with files,
// the rest with next.
func WithFiles(files, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, blob.PathPrefix) {
			files.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
