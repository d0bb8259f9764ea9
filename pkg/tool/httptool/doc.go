// Package httptool turns a config's endpoint tools into tools: each call
// renders the endpoint template with the model's arguments and the dialog's
// variables and sends it through pkg/outbound.
package httptool
