package store

// Access is a kind of use a function makes of the table. The IAM actions
// of each are exactly the DynamoDB operations the store issues for it, so
// the infrastructure grants a function what its code calls and nothing
// more (a design test keeps the lists equal to the store's calls).
type Access string

// Kinds of table access.
const (
	// Read: GetItem, Query (table and indexes), BatchGetItem.
	Read Access = "read"
	// Write: single puts, updates and deletes, and transactions of them
	// with condition checks (IAM authorizes a transaction by its parts).
	Write Access = "write"
	// Count: adding to rate limit counters (store.Reserve), what a function
	// that only reads records still writes.
	Count Access = "count"
	// Describe: reading the table's own description (health checks, and
	// the operator's create-table on a table that already exists).
	Describe Access = "describe"
	// Manage: creating the table, turning on its time to live and adding
	// the indexes of a newer layout (MigrateLayout); only the operator CLI
	// on a local or self-managed table needs it.
	Manage Access = "manage"
	// Tenants: scanning the table for its organizations (list-orgs,
	// export-org) and writing and deleting items in batches (restore-org,
	// delete-org): the operator's tenant lifecycle, on the table only.
	Tenants Access = "tenants"
	// Vectors: putting the embedding vectors of searchable records
	// (PutVectors), what the functions that keep them current write.
	Vectors Access = "vectors"
)

// Actions are the IAM actions of each kind of access.
var Actions = map[Access][]string{
	Read:     {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"},
	Write:    {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"},
	Count:    {"dynamodb:UpdateItem"},
	Describe: {"dynamodb:DescribeTable", "dynamodb:DescribeTimeToLive"},
	Manage:   {"dynamodb:CreateTable", "dynamodb:UpdateTimeToLive", "dynamodb:UpdateTable"},
	Tenants:  {"dynamodb:Scan", "dynamodb:BatchWriteItem"},
	Vectors:  {"dynamodb:PutItem"},
}

// IAMActions returns the IAM actions of the given kinds, in order.
func IAMActions(kinds ...Access) []string {
	var out []string
	for _, k := range kinds {
		out = append(out, Actions[k]...)
	}
	return out
}
