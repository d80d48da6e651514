package runs

import "github.com/sourcebase/sourcebase/internal/steps"

// CheckSteps refuses steps whose writes every run would refuse, as far as
// they are known before a run (steps.Executor.Check: the fields, tags and
// enrichment values the steps write, checked by the writers that write
// them). workflows.Service calls it when a workflow's steps are saved.
func (s *Service) CheckSteps(list []steps.Step) error { return s.executor.Check(list) }
