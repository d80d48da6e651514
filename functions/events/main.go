// Command events is the Lambda function fed by the table's DynamoDB
// stream: every change of a record becomes an event of the change
// history, and its deliveries to the organization's webhook endpoints are
// queued.
package main

import "github.com/sourcebase/sourcebase/internal/serve/eventfns"

func main() { eventfns.ServeEvents() }
