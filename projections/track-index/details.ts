import type { RecordedEvent } from '../../src/eventstore/port.js';
import { refsOf } from '../../src/eventstore/sealing.js';

/** Characters of an item's payload the Live events list shows (its JSON text, cut). */
export const previewChars = 120;

/** What the track index keeps of an item for the Live events list (migrations: live-event-details). */
export interface LiveDetails {
  item_name: string | null;
  user_id: string | null;
  anonymous_id: string | null;
  /** The pseudonyms of an erased item's ids (src/eventstore/pseudonyms.ts); null for others. */
  user_ref: string | null;
  anonymous_ref: string | null;
  product_id: string | null;
  preview: string | null;
}

/**
 * The start of a JSON text, at most `previewChars` long, cut on a whole character (a cut between
 * the two halves of a surrogate pair would leave text PostgreSQL refuses), ending in '…' when cut.
 */
export function previewOf(payload: object): string {
  const json = JSON.stringify(payload);
  if (json.length <= previewChars) return json;
  let end = previewChars - 1;
  const last = json.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${json.slice(0, end)}…`;
}

/** The name, the person, the product and the payload's start of one stored event. */
export function liveDetailsOf(event: RecordedEvent): LiveDetails {
  // An erased person's item keeps the pseudonyms of its ids (what the auditor can match an id
  // against), not the ids, its name or payload.
  if (event.erased) {
    const { userRef, anonymousRef } = refsOf(event.data);
    const { productId } = event.data as { productId?: string };
    return { item_name: null, user_id: null, anonymous_id: null, user_ref: userRef ?? null, anonymous_ref: anonymousRef ?? null, product_id: productId ?? null, preview: null };
  }
  return { ...readableDetailsOf(event), user_ref: null, anonymous_ref: null };
}

function readableDetailsOf(event: RecordedEvent): Omit<LiveDetails, 'user_ref' | 'anonymous_ref'> {
  switch (event.type) {
    case 'UserUpserted': {
      const { attributes } = event.data;
      return {
        item_name: null,
        user_id: event.data.userId ?? null,
        anonymous_id: event.data.anonymousId ?? null,
        product_id: null,
        preview: previewOf({ ...event.data.profile, ...(Object.keys(attributes).length > 0 ? { attributes } : {}) }),
      };
    }
    case 'ProfilesMerged':
      return { item_name: null, user_id: event.data.userId, anonymous_id: event.data.anonymousId, product_id: null, preview: null };
    case 'EventTracked':
      return {
        item_name: event.data.eventName,
        user_id: event.data.userId ?? null,
        anonymous_id: event.data.anonymousId ?? null,
        product_id: null,
        preview: previewOf(event.data.eventData),
      };
    case 'ProductSubmitted':
      return { item_name: null, user_id: event.data.userId ?? null, anonymous_id: null, product_id: event.data.productId, preview: previewOf(event.data.properties) };
    case 'ProductEventTracked':
      return {
        item_name: event.data.eventName,
        user_id: event.data.userId,
        anonymous_id: null,
        product_id: event.data.productId,
        preview: previewOf(event.data.eventData),
      };
  }
}
