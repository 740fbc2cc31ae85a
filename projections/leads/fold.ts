import type { EventDataOf, EventOf } from '../../src/eventstore/events.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { systemAttributes } from '../../src/spec/system-attributes.js';

/**
 * The leads fold: how UserUpserted and ProfilesMerged change lead rows, as pure functions of the
 * events and the rows they touch. Times come from the events' `receivedAt`, never from a clock.
 */

export type ProfileKind = 'user' | 'anonymous';
export type ProfileValue = string | number | boolean;

/** A row of the `leads` table, keyed by column name (see the read-models migration). */
export interface LeadRow {
  account_id: string;
  profile_kind: ProfileKind;
  profile_id: string;
  user_id: string | null;
  anonymous_id: string | null;
  attributes: Record<string, ProfileValue>;
  attribute_types: Record<string, string>;
  own_keys: string[];
  anonymous_ids: string[];
  merged_into: string | null;
  search_text: string;
  version: number;
  created_position: number;
  created_at: string;
  changed_at: string;
  /** The other system attribute columns (email, birth_date, ...), null when never set. */
  [column: string]: unknown;
}

export interface LeadMerge {
  account_id: string;
  anonymous_id: string;
  user_id: string;
}

/**
 * One value sent to a profile, keyed as in `own_keys`: a column (`email`, a value as sent), or a
 * custom attribute (`attributes.plan`, named `plan`) with its type.
 */
type Change = { key: string; attribute?: undefined; value: unknown } | { key: string; attribute: string; value: ProfileValue; type: string | undefined };

const attributePrefix = 'attributes.';

/** The leads column of a request field (firstName: first_name; docs/spec.md 2.2 lists them in lowercase). */
const columnOfField = new Map(systemAttributes.map((a) => [a.name, a.column]));
const columnOf = (field: string): string => columnOfField.get(field) ?? field;

function changesOfUpsert(data: EventDataOf['UserUpserted']): Change[] {
  const changes: Change[] = [];
  for (const [field, value] of Object.entries(data.profile)) {
    // Date-times are stored as their UTC instant.
    changes.push({ key: columnOf(field), value: data.instants[field] ?? value });
  }
  for (const [key, value] of Object.entries(data.attributes)) {
    const path = attributePrefix + key;
    const instant = data.instants[path];
    changes.push({ key: path, attribute: key, value: instant ? sixDigits(instant) : value, type: data.attributeTypes[key] ?? typeof value });
  }
  return changes;
}

/** The values an anonymous profile was sent itself, to fill the gaps of the profile it merges into. */
function ownValues(lead: LeadRow): Change[] {
  return lead.own_keys.map((key) => {
    if (!key.startsWith(attributePrefix)) return { key, value: lead[key] };
    const name = key.slice(attributePrefix.length);
    return { key, attribute: name, value: lead.attributes[name] as ProfileValue, type: lead.attribute_types[name] };
  });
}

function setValue(lead: LeadRow, change: Change): void {
  if (change.attribute !== undefined) {
    const name = change.attribute;
    lead.attributes = { ...lead.attributes, [name]: change.value };
    if (change.type) lead.attribute_types = { ...lead.attribute_types, [name]: change.type };
  } else {
    lead[change.key] = change.value;
  }
}

const rowKey = (accountId: string, kind: ProfileKind, id: string): string => `${accountId}\u0000${kind}\u0000${id}`;
const mergeKey = (accountId: string, anonymousId: string): string => `${accountId}\u0000${anonymousId}`;

/** The lead rows a batch touches, loaded beforehand, and the changes the batch makes to them. */
export class LeadBook {
  private readonly rows = new Map<string, LeadRow>();
  private readonly merges = new Map<string, string>();
  private readonly changed = new Set<LeadRow>();
  private readonly added: LeadMerge[] = [];

  constructor(rows: Iterable<LeadRow>, merges: Iterable<LeadMerge>) {
    for (const row of rows) this.rows.set(rowKey(row.account_id, row.profile_kind, row.profile_id), row);
    for (const merge of merges) this.merges.set(mergeKey(merge.account_id, merge.anonymous_id), merge.user_id);
  }

  apply(event: RecordedEvent): void {
    if (event.type === 'UserUpserted') this.upsert(event);
    else if (event.type === 'ProfilesMerged') this.merge(event);
  }

  /** The rows the events changed, their search text made from their values after the last. */
  changedRows(): LeadRow[] {
    const rows = [...this.changed];
    for (const row of rows) row.search_text = searchTextOf(row);
    return rows;
  }

  addedMerges(): LeadMerge[] {
    return this.added;
  }

  private upsert(event: RecordedEvent<EventOf<'UserUpserted'>>): void {
    const data = event.data;
    const accountId = event.metadata.accountId;
    const changes = changesOfUpsert(data);
    if (data.userId !== undefined) {
      // A merge sent with the upsert comes as its own ProfilesMerged event right after this one.
      const lead = this.lead(accountId, 'user', data.userId, event);
      this.setOwn(lead, changes);
      this.touch(lead, event);
      return;
    }
    const anonymousId = data.anonymousId;
    // Ingest never stores one without either id (personStream); such an event is parked.
    if (anonymousId === undefined) throw new Error('a UserUpserted event needs a userId or an anonymousId');
    const lead = this.lead(accountId, 'anonymous', anonymousId, event);
    this.setOwn(lead, changes);
    // Merged already (also when the merge came before this profile existed): the known profile
    // takes the values it has not been sent itself.
    lead.merged_into ??= this.merges.get(mergeKey(accountId, anonymousId)) ?? null;
    this.touch(lead, event);
    if (lead.merged_into !== null) {
      const known = this.lead(accountId, 'user', lead.merged_into, event);
      this.fillGaps(known, changes);
      this.touch(known, event);
    }
  }

  private merge(event: RecordedEvent<EventOf<'ProfilesMerged'>>): void {
    const { userId, anonymousId } = event.data;
    const accountId = event.metadata.accountId;
    const key = mergeKey(accountId, anonymousId);
    // An anonymous id merges once; the ingest side refuses a second target, so a repeat is a no-op.
    if (this.merges.has(key)) return;
    this.merges.set(key, userId);
    this.added.push({ account_id: accountId, anonymous_id: anonymousId, user_id: userId });
    const known = this.lead(accountId, 'user', userId, event);
    known.anonymous_ids = [...known.anonymous_ids, anonymousId];
    const anonymous = this.rows.get(rowKey(accountId, 'anonymous', anonymousId));
    if (anonymous) {
      anonymous.merged_into = userId;
      this.touch(anonymous, event);
      this.fillGaps(known, ownValues(anonymous));
    }
    this.touch(known, event);
  }

  private setOwn(lead: LeadRow, changes: Change[]): void {
    const own = new Set(lead.own_keys);
    for (const change of changes) {
      setValue(lead, change);
      own.add(change.key);
    }
    lead.own_keys = [...own];
  }

  /** Known values win: only keys the profile was never sent itself take the anonymous value. */
  private fillGaps(known: LeadRow, changes: Change[]): void {
    const own = new Set(known.own_keys);
    for (const change of changes) if (!own.has(change.key)) setValue(known, change);
  }

  private touch(lead: LeadRow, event: RecordedEvent): void {
    lead.version += 1;
    lead.changed_at = event.metadata.receivedAt;
    this.changed.add(lead);
  }

  private lead(accountId: string, kind: ProfileKind, id: string, creator: RecordedEvent): LeadRow {
    const key = rowKey(accountId, kind, id);
    let lead = this.rows.get(key);
    if (!lead) {
      lead = newLead(accountId, kind, id, creator);
      this.rows.set(key, lead);
    }
    return lead;
  }
}

/**
 * The text `q` is matched against, one field per line: the profile id, email, first and last name,
 * the full name, and merged anonymous ids, lowercased here rather than by the database, whose
 * lower() depends on its locale (a C locale leaves `É` as it is).
 */
export function searchTextOf(lead: LeadRow): string {
  const names = [lead.first_name, lead.last_name].filter((n): n is string => typeof n === 'string');
  const fields = [lead.profile_id, lead.email, ...names, names.length === 2 ? names.join(' ') : null, ...lead.anonymous_ids];
  return fields
    .filter((f): f is string => typeof f === 'string')
    .join('\n')
    .toLowerCase();
}

/** UTC instants with six fraction digits, as the read API shows every time. */
export const sixDigits = (instant: string): string => instant.replace(/\.(\d{1,6})Z$/, (_, f: string) => `.${f.padEnd(6, '0')}Z`);

/**
 * The defaults of docs/spec.md 2.2 by column: constants, and "current time at creation" as the creating
 * event's receipt, so that a rebuild gives the same value.
 */
function defaultsAtCreation(receivedAt: string): Record<string, unknown> {
  return Object.fromEntries(
    systemAttributes.flatMap((a) => (a.default === undefined ? [] : [[a.column, a.default === 'creation time' ? receivedAt : a.default.value]])),
  );
}

/** A profile as its first event creates it, with the defaults of docs/spec.md 2.2. */
function newLead(accountId: string, kind: ProfileKind, id: string, creator: RecordedEvent): LeadRow {
  const receivedAt = creator.metadata.receivedAt;
  return {
    account_id: accountId,
    profile_kind: kind,
    profile_id: id,
    user_id: kind === 'user' ? id : null,
    anonymous_id: kind === 'anonymous' ? id : null,
    ...defaultsAtCreation(receivedAt),
    attributes: {},
    attribute_types: {},
    own_keys: [],
    anonymous_ids: [],
    merged_into: null,
    search_text: '',
    version: 0,
    created_position: creator.globalPosition,
    created_at: receivedAt,
    changed_at: receivedAt,
  };
}

/** Keys of the rows and merges a batch may touch, to load them in two queries. */
export function leadKeysOf(events: RecordedEvent[]): { rows: [string, ProfileKind, string][]; anonymous: [string, string][] } {
  const rows = new Map<string, [string, ProfileKind, string]>();
  const anonymous = new Map<string, [string, string]>();
  const addRow = (accountId: string, kind: ProfileKind, id: string) => rows.set(rowKey(accountId, kind, id), [accountId, kind, id]);
  for (const event of events) {
    const accountId = event.metadata.accountId;
    if (event.type === 'UserUpserted') {
      const data = event.data;
      if (data.userId !== undefined) addRow(accountId, 'user', data.userId);
      else if (data.anonymousId !== undefined) {
        addRow(accountId, 'anonymous', data.anonymousId);
        anonymous.set(mergeKey(accountId, data.anonymousId), [accountId, data.anonymousId]);
      }
    } else if (event.type === 'ProfilesMerged') {
      const data = event.data;
      // Both ids are required by the contract; a stored event without them touches no row here.
      if (data.userId === undefined || data.anonymousId === undefined) continue;
      addRow(accountId, 'user', data.userId);
      addRow(accountId, 'anonymous', data.anonymousId);
      anonymous.set(mergeKey(accountId, data.anonymousId), [accountId, data.anonymousId]);
    }
  }
  return { rows: [...rows.values()], anonymous: [...anonymous.values()] };
}
