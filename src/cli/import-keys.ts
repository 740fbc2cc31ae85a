import { createHash } from 'node:crypto';
import type { BatchInfo } from '@tracking-ingestion/sdk';

/**
 * The Idempotency-Key of a batch of an import, derived from the file's content: the kind, the
 * batch's number among the import's batches of that kind and the items themselves. The client cuts
 * an import's batches by count and bytes only (flushIntervalMs 0), so the same file imported again
 * makes the same batches with the same numbers, each gets the key it had, and the service replays
 * its reply instead of storing it again. The number keeps two equal batches at different places in
 * a file apart: both are stored, as the file asks.
 */
export function batchKey(batch: BatchInfo): string {
  const hash = createHash('sha256');
  hash.update(`tracking import\n${batch.kind}\n${batch.sequence}\n`);
  for (const item of batch.items) hash.update(`${JSON.stringify(item)}\n`);
  return `import-${hash.digest('hex')}`;
}
