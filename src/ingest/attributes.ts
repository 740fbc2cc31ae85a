import type { AttributeType, AttributeValue } from '../eventstore/events.js';
import { dateTimeProblem, looksLikeDateTime, toUtcInstant } from './timestamps.js';

export type { AttributeType } from '../eventstore/events.js';

/**
 * Type of a custom attribute value that passed the schema (string, number or boolean). A string in
 * the form of an ISO date-time is a datetime (docs/decisions.md, Custom attributes).
 */
export function attributeType(value: AttributeValue): AttributeType {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  return looksLikeDateTime(value) ? 'datetime' : 'string';
}

export interface ClassifiedAttributes {
  types: Record<string, AttributeType>;
  /** UTC instants of the datetime attributes, keyed like `types`. */
  instants: Record<string, string>;
}

/** Types of every custom attribute, or a message naming the key of an impossible date. */
export function classifyAttributes(attributes: Record<string, AttributeValue>): ClassifiedAttributes | string {
  const types: Record<string, AttributeType> = {};
  const instants: Record<string, string> = {};
  for (const [key, value] of Object.entries(attributes)) {
    const type = attributeType(value);
    types[key] = type;
    if (type === 'datetime') {
      const instant = toUtcInstant(value as string);
      if (instant === null) return `attributes.${key} ${dateTimeProblem(value as string) ?? 'is not a date-time'}, not '${String(value)}'`;
      instants[key] = instant;
    }
  }
  return { types, instants };
}
