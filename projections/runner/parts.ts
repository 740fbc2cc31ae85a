/**
 * Accounts are hashed into a fixed number of parts: the unit a worker claims. Each account keeps
 * its own cursors whatever part it is in, so the count only decides how finely work is shared
 * among workers (docs/projections.md, Parts, claims and checkpoints).
 */
export const partCount = 16;

/** The part of an account: FNV-1a of its id, so that every process agrees without asking. */
export function partOf(accountId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i += 1) {
    hash ^= accountId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partCount;
}
