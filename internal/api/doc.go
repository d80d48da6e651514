// Package api is the registry of the service's operations (Operations):
// each declared once, next to its handler — a thin function that reads
// the request, calls a domain service and writes the envelope — with its
// route and policies. The router, the OpenAPI document, the MCP tools and
// the route table of the CDK stack and SAM template are derived from it.
package api
