package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Files is the embedded static tree, rooted so that "index.html" is the
// landing page.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// fs.Sub fails only on an invalid path literal, which the build checks.
		panic("web: " + err.Error())
	}
	return sub
}
