// A real OpenID Connect provider for Parley's single sign-on tests:
// panva's oidc-provider (installed by .ci/install-oidc.sh) with one
// confidential client and static accounts, on 127.0.0.1 at a free port.
// Its own development login and consent pages are what a browser test
// drives. argv[2] is the module directory, argv[3] a JSON config:
//   {"client_id", "client_secret", "redirect_uris": [...],
//    "accounts": {"<login>": {"email", "email_verified"}}}
// It prints {"issuer"} on its first stdout line once it listens.
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.argv[2];
const cfg = JSON.parse(process.argv[3]);
const { default: Provider } = await import(pathToFileURL(path.join(modules, 'oidc-provider', 'lib', 'index.js')).href);

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: cfg.client_id,
    client_secret: cfg.client_secret,
    redirect_uris: cfg.redirect_uris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  // The email claims go into the ID token itself, which is what Parley
  // reads (not the userinfo endpoint).
  conformIdTokenClaims: false,
  cookies: { keys: ['parley-oidc-test'] },
  // Any login name signs in; the accounts table says what it claims.
  async findAccount(ctx, id) {
    const claims = cfg.accounts[id] || { email: `${id}@unknown.test`, email_verified: false };
    return { accountId: id, async claims() { return { sub: id, ...claims }; } };
  },
});
for (const ev of ['server_error', 'authorization.error', 'grant.error', 'interaction.error']) {
  provider.on(ev, (ctx, err) => console.error(ev, err));
}
server.on('request', provider.callback());
process.stdout.write(JSON.stringify({ issuer }) + '\n');
// The Go test ends this process by closing stdin (or killing it).
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
