// OpenID Connect ID tokens (GitLab's doorkeeper-openid_connect): an RS256 JWT for a code redeemed
// with the `openid` scope, signed with the instance's key, whose public half is served at
// /oauth/discovery/keys. The key is made on first use and kept in the data directory, which every
// process of one instance shares (as it shares the repositories), so all sign alike.
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { link, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';

interface JsonWebKey {
  kty?: string;
  e?: string;
  n?: string;
}
import type { AppContext } from '../context.js';
import { findUserById } from '../db/repositories/users.js';
import { now } from './clock.js';
import { invalidGrant } from './errors.js';
import { groupClaims, subLegacy } from './info.js';

/** doorkeeper-openid_connect's default lifetime of an ID token, seconds. */
const ID_TOKEN_TTL = 120;
const KEY_FILE = 'openid_connect_signing_key.pem';

interface SigningKey {
  privateKey: KeyObject;
  jwk: JsonWebKey & { kid: string; use: 'sig'; alg: 'RS256' };
}

function base64url(buf: Buffer | string): string {
  return Buffer.from(buf).toString('base64url');
}

/** The RFC 7638 thumbprint of an RSA key: the key id doorkeeper-openid_connect gives it. */
function thumbprint(jwk: JsonWebKey): string {
  return base64url(createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).digest());
}

async function readKeyFile(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the OpenID Connect signing key ${file}: ${(err as Error).message}`);
  }
}

async function loadOrCreate(dataDir: string): Promise<SigningKey> {
  const file = join(dataDir, KEY_FILE);
  let pem = await readKeyFile(file);
  if (pem === null) {
    const made = await new Promise<string>((resolve, reject) =>
      generateKeyPair('rsa', { modulusLength: 2048 }, (err, _pub, priv) => (err ? reject(err) : resolve(priv.export({ type: 'pkcs8', format: 'pem' }) as string))),
    );
    // Written whole under a name of its own, then linked into place: link() fails if another
    // process got there first, and nobody ever reads a half-written key.
    const tmp = `${file}.${process.pid}.${randomUUID()}`;
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(made);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(tmp, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await unlink(tmp).catch(() => undefined);
    pem = await readKeyFile(file);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem ?? '');
  } catch (err) {
    throw new Error(`the OpenID Connect signing key ${file} is not a private key: ${(err as Error).message}`);
  }
  const pub = createPublicKey(privateKey).export({ format: 'jwk' });
  return { privateKey, jwk: { kty: pub.kty, kid: thumbprint(pub), e: pub.e, n: pub.n, use: 'sig', alg: 'RS256' } };
}

const keys = new Map<string, Promise<SigningKey>>();

export function signingKey(dataDir: string): Promise<SigningKey> {
  let pending = keys.get(dataDir);
  if (!pending) {
    pending = loadOrCreate(dataDir);
    pending.catch(() => keys.delete(dataDir));
    keys.set(dataDir, pending);
  }
  return pending;
}

export interface IdTokenInput {
  issuer: string;
  clientId: string;
  userId: number;
  scopes: string[];
  nonce: string | null;
}

/** The signed ID token. Claims as GitLab's (those its configuration sends in ID tokens). */
export async function makeIdToken(ctx: AppContext, input: IdTokenInput): Promise<string> {
  const user = await findUserById(ctx.db, input.userId);
  // The user went between the grant and here: no token for nobody (as GitLab's resource owner lookup).
  if (!user) throw invalidGrant();
  const key = await signingKey(ctx.config.dataDir);
  const iat = Math.floor(now() / 1000);
  const emailScope = input.scopes.includes('email');
  // GitLab: the primary email with the `email` scope, else the public email, if any.
  const email = emailScope ? user.email : user.public_email || undefined;
  const claims: Record<string, unknown> = {
    iss: input.issuer,
    sub: String(user.id),
    aud: input.clientId,
    exp: iat + ID_TOKEN_TTL,
    iat,
    nonce: input.nonce ?? undefined,
    auth_time: user.current_sign_in_at ? Math.floor(Date.parse(user.current_sign_in_at) / 1000) : undefined,
    sub_legacy: subLegacy(ctx, user.id),
    email,
    email_verified: email === undefined ? undefined : user.confirmed_at !== null,
    groups_direct: (await groupClaims(ctx, user.id)).direct,
  };
  const header = { typ: 'JWT', alg: 'RS256', kid: key.jwk.kid };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(signingInput), key.privateKey);
  return `${signingInput}.${base64url(signature)}`;
}

export function registerJwks(app: FastifyInstance): void {
  // GET /oauth/discovery/keys
  app.get('/oauth/discovery/keys', async function jwks(_req, reply) {
    const key = await signingKey(app.lw.config.dataDir);
    reply.type('application/json').header('Cache-Control', 'max-age=86400, public, must-revalidate, no-transform');
    return reply.send(JSON.stringify({ keys: [key.jwk] }));
  });
}
