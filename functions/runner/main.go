// Command runner is the Lambda the state machines invoke: it executes a
// run ({"action":"execute",...}) or marks it failed from the Catch path
// ({"action":"fail",...}), runs a bulk job's steps ({"action":"job.step",
// ...}: package jobs), and sweeps on its schedule.
package main

import (
	"github.com/sourcebase/sourcebase/internal/serve/jobfns"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() { service.ServeRunner(jobfns.Option) }
