// Package auth handles credentials and permissions, without touching the
// database:
//
//   - API keys: GenerateAPIKey makes sk_/pk_ keys with 160 random bits;
//     only HashToken(key), the prefix and the last four characters are
//     ever stored.
//   - Passwords: PasswordHasher wraps bcrypt (a lower cost for tests).
//   - Sessions: NewSessionToken for admin UI sign-ins.
//   - Permissions: Authorizer answers Can(subject, tenant, object, action)
//     from the casbin model and policy embedded in configs/.
//   - Secrets: Sealer encrypts tenant secrets with AES-256-GCM, binding each
//     ciphertext to its tenant and name; LoadOrCreateKeyFile and ParseKey
//     supply the key.
package auth
