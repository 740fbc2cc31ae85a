import type { Pool } from '../db/pool.js';
import type { AccountRefs } from '../eventstore/events.js';
import { personIds } from '../eventstore/sealing.js';
import type { ErasureJob } from './requests.js';
import * as sql from './sql.js';

/** A pool or a client in a transaction. */
export type Queryable = Pick<Pool, 'query'>;

/**
 * The people an erasure names: its user, every anonymous id merged into them, and its anonymous id;
 * by their ids where still kept (the read models and refusals know them so) and by the ids'
 * pseudonyms (keys, streams, the identity map and suppression know them so).
 */
export interface Persons {
  users: string[];
  anonymous: string[];
  userRefs: string[];
  anonymousRefs: string[];
  /** The pseudonyms the identity map has merged into the user: the erasure's own anonymous id too, once merged. */
  mergedRefs: string[];
  /** As person_keys and suppressed_ids name them. */
  keys: string[];
  /** The ids as JSON strings and quoted '...': how excerpts, replies and messages hold them. */
  needles: string[];
}

/** The people of `job` as the identity map has them now. */
export async function personsOf(db: Queryable, job: ErasureJob, refs: AccountRefs): Promise<Persons> {
  const users = job.userId === null ? [] : [job.userId];
  const userRefs = users.map((id) => refs.user(id));
  const merged = userRefs.length === 0 ? [] : (await db.query<{ anonymous_ref: string; anonymous_id: string | null }>(sql.mergedAnonymousIds, [job.accountId, userRefs])).rows;
  const own = job.anonymousId === null ? [] : [job.anonymousId];
  // An id merged into the user and erased before has only its pseudonym left.
  const anonymous = [...new Set([...own, ...merged.flatMap((r) => (r.anonymous_id === null ? [] : [r.anonymous_id]))])];
  const anonymousRefs = [...new Set([...own.map((id) => refs.anonymous(id)), ...merged.map((r) => r.anonymous_ref)])];
  return {
    users,
    anonymous,
    userRefs,
    anonymousRefs,
    mergedRefs: merged.map((r) => r.anonymous_ref),
    keys: [...userRefs.map(personIds.user), ...anonymousRefs.map(personIds.anonymous)],
    needles: [...users, ...anonymous].flatMap((id) => [JSON.stringify(id), `'${id}'`]),
  };
}

/** Both sets of people: one erasure's, read again with ids merged since. */
export function union(a: Persons, b: Persons): Persons {
  const both = (key: keyof Persons): string[] => [...new Set([...a[key], ...b[key]])];
  return { users: both('users'), anonymous: both('anonymous'), userRefs: both('userRefs'), anonymousRefs: both('anonymousRefs'), mergedRefs: both('mergedRefs'), keys: both('keys'), needles: both('needles') };
}
