// PKCE (RFC 7636), S256 only. Challenges and verifiers are checked for shape before comparison.
import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../services/secrets.js';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is the unpadded base64url of 32 bytes: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export function validChallenge(challenge: string): boolean {
  return S256_CHALLENGE.test(challenge);
}

export function validVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  return validVerifier(verifier) && constantTimeEqual(s256(verifier), challenge);
}
