// Signs the end-user tokens pkg/identity's tests verify, with jose from npm, as a tenant's
// Node backend would. Usage:
//   node sign.mjs '{"secret":"...","other_secret":"...","aud":"..."}' .ci/jose/node_modules/jose
// (the installed package's directory: .ci/install-jose.sh). Prints {"jwks": {...}, "tokens": {name: token}}.
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const jose = await import(pathToFileURL(join(resolve(process.argv[3]), 'dist/webapi/index.js')).href);
const { secret, other_secret: otherSecret, aud } = JSON.parse(process.argv[2]);
const enc = new TextEncoder();
const now = Math.floor(Date.now() / 1000);
const claims = { customer_id: 'cus_42', plan: 'gold', level: 3 };

const rsa = await jose.generateKeyPair('RS256', { extractable: true });
const ec = await jose.generateKeyPair('ES256', { extractable: true });
const stranger = await jose.generateKeyPair('RS256', { extractable: true });
const jwks = { keys: [
  { ...(await jose.exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
  { ...(await jose.exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
] };

// sign makes a token for user-1 with aud, living ten minutes, unless opts say otherwise.
async function sign(key, alg, opts = {}) {
  const t = new jose.SignJWT({ ...claims, ...(opts.claims || {}) })
    .setProtectedHeader({ alg, typ: 'JWT', ...(opts.kid ? { kid: opts.kid } : {}) })
    .setSubject(opts.sub ?? 'user-1')
    .setIssuedAt(opts.iat ?? now);
  if (opts.exp !== null) t.setExpirationTime(opts.exp ?? now + 600);
  if (opts.nbf) t.setNotBefore(opts.nbf);
  if ((opts.aud ?? aud) !== '') t.setAudience(opts.aud ?? aud);
  return t.sign(key);
}

const hs = enc.encode(secret);
const spki = await jose.exportSPKI(rsa.publicKey);
const tokens = {
  hs_ok: await sign(hs, 'HS256'),
  hs_no_aud: await sign(hs, 'HS256', { aud: '' }),
  hs_expired: await sign(hs, 'HS256', { iat: now - 7200, exp: now - 3600 }),
  hs_no_exp: await sign(hs, 'HS256', { exp: null }),
  hs_not_yet_valid: await sign(hs, 'HS256', { nbf: now + 3600 }),
  hs_issued_in_future: await sign(hs, 'HS256', { iat: now + 3600, exp: now + 4000 }),
  hs_too_long: await sign(hs, 'HS256', { exp: now + 7 * 86400 }),
  hs_wrong_aud: await sign(hs, 'HS256', { aud: 'someone-else' }),
  hs_other_tenant: await sign(enc.encode(otherSecret), 'HS256'),
  hs_no_sub: await sign(hs, 'HS256', { sub: '' }),
  hs512: await sign(hs, 'HS512'),
  none: new jose.UnsecuredJWT({ ...claims }).setSubject('user-1').setAudience(aud)
    .setIssuedAt(now).setExpirationTime(now + 600).encode(),
  rs_ok: await sign(rsa.privateKey, 'RS256', { kid: 'rsa-1' }),
  es_ok: await sign(ec.privateKey, 'ES256', { kid: 'ec-1' }),
  rs_no_kid: await sign(rsa.privateKey, 'RS256'),
  rs_unknown_kid: await sign(stranger.privateKey, 'RS256', { kid: 'rsa-9' }),
  rs_stranger_as_known_kid: await sign(stranger.privateKey, 'RS256', { kid: 'rsa-1' }),
  es_under_rsa_kid: await sign(ec.privateKey, 'ES256', { kid: 'rsa-1' }),
  // Algorithm confusion: the RSA public key (as a JWKS tenant publishes it) used as an HS256 secret.
  hs_with_public_key: await sign(enc.encode(spki), 'HS256', { kid: 'rsa-1' }),
};
process.stdout.write(JSON.stringify({ jwks, tokens }));
