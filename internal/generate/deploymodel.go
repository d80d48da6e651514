package generate

import (
	"context"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/deploymodel"
	"github.com/sourcebase/sourcebase/internal/deploymodel/derive"
	"github.com/sourcebase/sourcebase/internal/kinds"
)

// deployModel makes the deployment model infra/ reads
// (internal/deploymodel/model.json) from the registry's route table and
// event catalog.
func deployModel(context.Context, string, string, map[string][]byte) ([]File, []string, error) {
	b, err := derive.File(derive.Inputs{Routes: api.Routes(), Events: kinds.Events()})
	if err != nil {
		return nil, nil, err
	}
	return []File{{deploymodel.Path, b}}, nil, nil
}
