// Package web embeds the browser-facing files Parley serves: for now a
// landing page at "/" that says what the server is and where its health and
// API live; the admin UI and the chat widget will join it here as static
// files, with no build step.
//
// Files returns the embedded tree; pkg/api serves it.
package web
