// Package docs embeds the documentation pages,
// so that the service can offer them (as MCP resources) without reading
// the repository at run time.
package docs

import "embed"

// Pages are the Markdown pages of docs/.
//
//go:embed *.md
var Pages embed.FS
