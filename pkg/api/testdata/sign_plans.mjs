// Signs end-user tokens with jose from npm, as a tenant's Node backend would, for the
// knowledge tags_from tests (pkg/api/knowledge_bots_test.go). Usage:
//   node sign_plans.mjs '{"secret":"...","aud":"...","users":{"name":{"sub":"...","plan":...}}}' .ci/jose/node_modules/jose
// Prints {name: token}; a user's fields besides sub are its claims.
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const jose = await import(pathToFileURL(join(resolve(process.argv[3]), 'dist/webapi/index.js')).href);
const { secret, aud, users } = JSON.parse(process.argv[2]);
const key = new TextEncoder().encode(secret);
const now = Math.floor(Date.now() / 1000);
const out = {};
for (const [name, { sub, ...claims }] of Object.entries(users)) {
  out[name] = await new jose.SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub).setAudience(aud).setIssuedAt(now).setExpirationTime(now + 600).sign(key);
}
process.stdout.write(JSON.stringify(out));
