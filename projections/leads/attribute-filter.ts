import { looksLikeDateTime, toUtcInstant } from '../../src/ingest/timestamps.js';
import { sixDigits } from './fold.js';

/**
 * The leads list's filter by a custom attribute (`attribute=plan&value=gold`, docs/api.md): the
 * leads whose attribute holds the value. The value comes as text; the attribute holds a string, a
 * number, a boolean or a datetime (stored as its UTC instant), so the text is looked for as each of
 * these it can be read as: `12` finds 12 and "12", `true` finds true and "true", and a date-time
 * finds the instant it names, in whatever form it was sent.
 */
export interface AttributeFilter {
  name: string;
  value: string;
}

/** The names a custom attribute can have (schemas/user.json). */
export const attributeNamePattern = /^[a-z][a-z0-9_]*$/;
export const maxAttributeNameLength = 100;
/** The longest value the filter takes, in characters. */
export const maxAttributeValueLength = 1000;

/** A number as JSON writes one: the text of a number attribute as it was sent. */
const jsonNumber = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The values the text can stand for, as JSON values. */
function valuesOf(text: string): unknown[] {
  const values: unknown[] = [text];
  // Ingest reads numbers as JavaScript does (JSON.parse): a finite double, stored as it writes one.
  if (jsonNumber.test(text) && Number.isFinite(Number(text))) values.push(Number(text));
  if (text === 'true' || text === 'false') values.push(text === 'true');
  const instant = looksLikeDateTime(text) ? toUtcInstant(text) : null;
  if (instant !== null && sixDigits(instant) !== text) values.push(sixDigits(instant));
  return values;
}

/**
 * The JSON documents `lead_attributes_key(account_id, profile_kind, attributes) @> ANY(...)` looks
 * for (the index leads_attributes): `{ "<account id>": { "<kind>": { "<name>": <value> } } }`, one
 * per kind listed (`user`, `anonymous`) and reading of the value. The account's id and the kind in
 * the key keep another account's leads, and those of the other kind, out of the index lookup itself.
 */
export function attributeCandidates(accountId: string, kinds: readonly string[], filter: AttributeFilter): string[] {
  return kinds.flatMap((kind) => valuesOf(filter.value).map((value) => JSON.stringify({ [accountId]: { [kind]: { [filter.name]: value } } })));
}
