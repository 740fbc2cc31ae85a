import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AccountRefs, EventType, TrackingEvent } from './events.js';

/**
 * Crypto-shredding (docs/decisions.md, Erasure): the personal fields of every event that names a
 * person are stored sealed with that person's key (AES-256-GCM), and erasing the person deletes
 * the key. What stays readable is what an auditor needs: the ids, the type, the times and the
 * product.
 */

/** The fields sealed of each event type; the others (ids, eventTimeUtc, productId) stay readable. */
export const sealedFields = {
  UserUpserted: ['profile', 'attributes', 'attributeTypes', 'instants'],
  // Nothing personal beyond the ids, but sealed (an empty box) so that it reads as erased with its person.
  ProfilesMerged: [],
  EventTracked: ['eventName', 'eventTime', 'eventData'],
  ProductSubmitted: ['properties'],
  ProductEventTracked: ['eventName', 'eventTime', 'eventData'],
} as const satisfies { [T in EventType]: readonly string[] };

/** What an erased event's sealed fields read as: empty, of their type's shape. */
const erasedValues: { [T in EventType]: Record<string, unknown> } = {
  UserUpserted: { profile: {}, attributes: {}, attributeTypes: {}, instants: {} },
  ProfilesMerged: {},
  EventTracked: { eventName: '', eventTime: null, eventData: {} },
  ProductSubmitted: { properties: {} },
  ProductEventTracked: { eventName: '', eventTime: null, eventData: {} },
};

/** A person of an account, as keys are kept: `u:<userId>` or `a:<anonymousId>`. */
export type PersonId = string;

export const personIds = {
  user: (userId: string): PersonId => `u:${userId}`,
  anonymous: (anonymousId: string): PersonId => `a:${anonymousId}`,
};

/**
 * The person whose key seals an event, by the pseudonym of their id: its userId when it has one (a
 * known user's events, merges and products events), else its anonymousId; null for an event that
 * names nobody (a product submitted without a user), which is stored as sent.
 */
export function personOf(event: TrackingEvent, refs: AccountRefs): PersonId | null {
  const data: { userId?: string | null; anonymousId?: string } = event.data;
  if (typeof data.userId === 'string') return personIds.user(refs.user(data.userId));
  if (typeof data.anonymousId === 'string') return personIds.anonymous(refs.anonymous(data.anonymousId));
  return null;
}

/** The ids an event names, sealed with the rest; readable in their place are their pseudonyms. */
const idFields = { userId: 'userRef', anonymousId: 'anonymousRef' } as const;

/** The pseudonyms readable in a stored event in place of its ids (an erased event keeps only these). */
export interface StoredRefs {
  userRef?: string;
  anonymousRef?: string;
}

/** The sealed box as stored in an event's data, under `sealed`. */
export interface SealedBox {
  /** The key's id (person_keys.key_id). */
  k: number;
  /** 1 when the plaintext was deflated before sealing. */
  z?: 1;
  /** base64 of iv (12 bytes), tag (16 bytes) and ciphertext. */
  b: string;
}

export const isSealedBox = (value: unknown): value is SealedBox =>
  typeof value === 'object' && value !== null && typeof (value as { k?: unknown }).k === 'number' && typeof (value as { b?: unknown }).b === 'string';

// Deflating pays where the fields are large: sealed as base64 they would take 4/3 of their bytes,
// and an event just under the body limit would no longer fit one EventStoreDB write.
const deflateFromBytes = 512;

/** Binds a box to its event: moved to another event or account, it does not open. */
const associatedData = (accountId: string, eventId: string): Buffer => Buffer.from(`${accountId}/${eventId}`);

export const newKey = (): Buffer => randomBytes(32);

// The iv of each box: 8 random bytes drawn per process (and again every 2^32 boxes) and a 4-byte
// counter, unique for every key without asking the random source once per event (NIST SP
// 800-38D, 8.2.1, the deterministic construction); two processes share a prefix with odds of 2^-64.
let ivPrefix = randomBytes(8);
let ivCounter = 0;

function nextIv(): Buffer {
  if (ivCounter === 0xffffffff) {
    ivPrefix = randomBytes(8);
    ivCounter = 0;
  }
  const iv = Buffer.allocUnsafe(12);
  ivPrefix.copy(iv, 0);
  iv.writeUInt32BE(ivCounter, 8);
  ivCounter += 1;
  return iv;
}

const sealedNames: { [T in EventType]: ReadonlySet<string> } = {
  UserUpserted: new Set(sealedFields.UserUpserted),
  ProfilesMerged: new Set(sealedFields.ProfilesMerged),
  EventTracked: new Set(sealedFields.EventTracked),
  ProductSubmitted: new Set(sealedFields.ProductSubmitted),
  ProductEventTracked: new Set(sealedFields.ProductEventTracked),
};

/**
 * The event's data with its sealed fields, and the ids it names, replaced by a box sealed with
 * `key`; the ids' pseudonyms (`refs`) stay readable in their place.
 */
export function seal(
  event: TrackingEvent & { id: string; metadata: { accountId: string } },
  key: { id: number; key: Buffer },
  refs: AccountRefs,
): Record<string, unknown> {
  // Built anew rather than emptied with delete, which would slow every later use of the object.
  const data: Record<string, unknown> = {};
  const fields: Record<string, unknown> = {};
  const names = sealedNames[event.type];
  for (const [name, value] of Object.entries(event.data)) {
    if (names.has(name)) fields[name] = value;
    else if (name === 'userId' || name === 'anonymousId') {
      fields[name] = value;
      if (typeof value === 'string') data[idFields[name]] = name === 'userId' ? refs.user(value) : refs.anonymous(value);
    } else data[name] = value;
  }
  const json = Buffer.from(JSON.stringify(fields));
  const deflate = json.length >= deflateFromBytes;
  const plain = deflate ? deflateRawSync(json) : json;
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(associatedData(event.metadata.accountId, event.id));
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  const box: SealedBox = { k: key.id, ...(deflate && { z: 1 as const }), b: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64') };
  data.sealed = box;
  return data;
}

/**
 * The event's data with its sealed fields replaced by a box of key `keyId` that was erased before
 * the event came: sealed with a key drawn for it and forgotten, it never opens, and reads as erased
 * by that key's erasure.
 */
export function sealErased(event: TrackingEvent & { id: string; metadata: { accountId: string } }, keyId: number, refs: AccountRefs): Record<string, unknown> {
  return seal(event, { id: keyId, key: newKey() }, refs);
}

/**
 * The sealed fields of a box, opened with its key, and the bytes of their JSON text; throws when
 * the box was not sealed for this event.
 */
export function open(box: SealedBox, key: Buffer, accountId: string, eventId: string): { fields: Record<string, unknown>; bytes: number } {
  const bytes = Buffer.from(box.b, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAAD(associatedData(accountId, eventId));
  decipher.setAuthTag(bytes.subarray(12, 28));
  const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
  const json = box.z === 1 ? inflateRawSync(plain) : plain;
  return { fields: JSON.parse(json.toString('utf8')) as Record<string, unknown>, bytes: json.length };
}

/**
 * Stored data with its box replaced by the fields it holds (the ids in place of their pseudonyms),
 * or by empty ones when its key is erased (the pseudonyms kept, the ids gone).
 */
export function unsealedData(type: EventType, stored: Record<string, unknown>, fields: Record<string, unknown> | null): Record<string, unknown> {
  const readable = { ...stored };
  delete readable.sealed;
  // Events stored before ids were sealed hold both, until their person is erased.
  if (fields === null) {
    delete readable.userId;
    delete readable.anonymousId;
    // A copy: the empty values are the caller's to change.
    return { ...readable, ...structuredClone(erasedValues[type]) };
  }
  delete readable.userRef;
  delete readable.anonymousRef;
  return { ...readable, ...fields };
}

/** The pseudonyms of the ids an erased event named (`data` as unsealedData left it). */
export function refsOf(data: object): StoredRefs {
  const { userRef, anonymousRef } = data as { userRef?: unknown; anonymousRef?: unknown };
  return { ...(typeof userRef === 'string' && { userRef }), ...(typeof anonymousRef === 'string' && { anonymousRef }) };
}
