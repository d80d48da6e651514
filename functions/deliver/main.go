// Command deliver is the Lambda function fed by the outbound webhooks'
// delivery queue: it signs and sends each delivery, and schedules its
// retries.
package main

import "github.com/sourcebase/sourcebase/internal/serve/eventfns"

func main() { eventfns.ServeDeliver() }
