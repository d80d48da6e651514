// Package capacity holds the load tests of the service under the
// partition simulator (internal/dev/partitionsim): one organization at
// the target rates of one resource type, many organizations at a mixed
// load, each scaled down so that a 2-core machine reaches the limits it
// stands for. make test runs a short version, make bench a long one
// (-capacity-seconds); docs/performance.md says what they show.
package capacity
