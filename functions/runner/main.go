// Command runner is the Lambda the run state machine invokes: it executes a
// run ({"action":"execute",...}) or marks it failed from the Catch path
// ({"action":"fail",...}).
package main

import "github.com/sourcebase/sourcebase/internal/app"

func main() { app.ServeRunner() }
