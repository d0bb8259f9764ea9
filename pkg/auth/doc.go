// Package auth handles credentials and permissions: API keys, passwords,
// sessions and casbin role checks.
package auth
