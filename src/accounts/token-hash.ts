import { createHash, timingSafeEqual } from 'node:crypto';

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Equal-time comparison of a presented secret with a stored hash. */
export function tokenMatches(presented: string, storedHash: Buffer): boolean {
  const presentedHash = hashToken(presented);
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}

/**
 * Which of `storedHashes` equals `presentedHash`, comparing against every one of them in equal
 * time (no early exit): the time taken does not tell which one matched, or how close another came.
 */
export function matchingIndex(presentedHash: Buffer, storedHashes: readonly Buffer[], equal = equalHashes): number {
  let found = -1;
  storedHashes.forEach((stored, index) => {
    if (equal(presentedHash, stored)) found = index;
  });
  return found;
}

function equalHashes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
