// OpenSSH public keys made in the test (node:crypto), for the SSH key and deploy key tests.
import { generateKeyPairSync } from 'node:crypto';

export function sshString(b: Buffer | string): Buffer {
  const buf = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
}

function mpint(b: Buffer): Buffer {
  return sshString(b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

/** A new public key in OpenSSH's one-line form. */
export function openssh(kind: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519', comment = 'me@host'): string {
  if (kind === 'ed25519') {
    const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as { x: string };
    const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.from(jwk.x, 'base64url'))]);
    return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
  }
  if (kind === 'rsa') {
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as { e: string; n: string };
    const blob = Buffer.concat([sshString('ssh-rsa'), mpint(Buffer.from(jwk.e, 'base64url')), mpint(Buffer.from(jwk.n, 'base64url'))]);
    return `ssh-rsa ${blob.toString('base64')} ${comment}`;
  }
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
  const blob = Buffer.concat([sshString('ecdsa-sha2-nistp256'), sshString('nistp256'), sshString(point)]);
  return `ecdsa-sha2-nistp256 ${blob.toString('base64')} ${comment}`;
}
