// Package web embeds the admin UI and the chat widget: static files served as
// they are, with no build step.
package web
