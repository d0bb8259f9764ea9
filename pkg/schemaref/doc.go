// Package schemaref finds the references in a JSON Schema that point
// outside it ("$ref" or "$id" not starting with "#", a draft-04 "id" naming
// a remote base). A schema library resolving them would fetch tenant- or
// server-chosen URLs past pkg/outbound, so botconfig refuses them in a
// config's tool parameters and pkg/tool before it compiles any schema.
//
// It depends on nothing of Parley's, so the config layer and the tool layer
// share one check.
package schemaref
