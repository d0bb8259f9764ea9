// Package web embeds the browser-facing files Parley serves, as plain
// static files with no build step:
//
//	static/index.html          the landing page at "/"
//	static/admin/              the admin UI at "/admin/": index.html, admin.css
//	                           and one ES module per page under js/
//	static/widget.js           the embeddable chat widget, one classic script
//	static/markdown.js         the Markdown renderer the widget and the admin
//	                           preview share (DOM only, never HTML)
//	static/widget-demo.html    a page that embeds the widget, for trying a bot
//
// Files returns the embedded tree; pkg/api serves it (with a strict
// Content-Security-Policy on the pages). The admin UI talks only to the
// JSON API under /v1, with the session cookie or an API key; the widget
// talks to the chat routes with a pk_ key, cross-origin (pkg/api/cors.go).
// The webtest package drives both in a real Chromium.
package web
