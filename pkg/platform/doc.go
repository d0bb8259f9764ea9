// Package platform is the application layer: tenants, bots, versions,
// dialogs, keys and metering, and the runtime hooks that join the agent loop
// to the store.
package platform
