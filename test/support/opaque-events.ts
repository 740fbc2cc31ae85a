import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/eventstore/port.js';

/** An event for the store's own tests: the store carries data without looking at it, so it need not have its type's shape. */
export function opaqueEvent(stream: string, id: string = randomUUID()): NewEvent {
  const opaque: Omit<NewEvent, 'data'> & { data: Record<string, unknown> } = {
    id,
    stream,
    type: 'EventTracked',
    data: { n: id },
    metadata: { trackId: id, accountId: 'acc', receivedAt: new Date().toISOString(), schemaVersion: 1 },
  };
  return opaque as NewEvent;
}
