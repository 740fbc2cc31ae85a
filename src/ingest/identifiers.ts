import { rejected, type ItemResult } from './results.js';

/**
 * Identifiers that SDKs send by mistake (an unset variable printed as text, a placeholder) and
 * that would otherwise merge unrelated people into one profile.
 */
const placeholderIds = new Set(['anonymous', 'null', 'undefined', '0', 'guest', '[object object]', 'nan', 'none']);

/** A message naming the field when `value` is not a usable identity, otherwise null. */
export function identityProblem(field: string, value: string): string | null {
  const normalized = value.trim().toLowerCase();
  if (normalized === '') return `${field} cannot be empty`;
  if (placeholderIds.has(normalized)) return `${field} '${value}' is a placeholder, not an identity`;
  return null;
}

/** The first of these ids that is sent but is not a usable identity, as a rejection; null when all are fine. */
export function checkIdentities(ids: Record<string, string | null | undefined>): ItemResult | null {
  for (const [field, id] of Object.entries(ids)) {
    const problem = typeof id === 'string' ? identityProblem(field, id) : null;
    if (problem) return rejected(problem, 'identity', field);
  }
  return null;
}

/** docs/spec.md 2.5 and 4.5 fix this reply for a product item whose productId is missing or empty. */
export const emptyProductIdMessage = 'productId cannot be empty';

/** Whether a productId is missing, null or only white space: the item gets emptyProductIdMessage. */
export function isEmptyProductId(productId: unknown): boolean {
  return productId === undefined || productId === null || (typeof productId === 'string' && productId.trim() === '');
}
