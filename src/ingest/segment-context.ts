import { isIP } from 'node:net';
import UAParser from 'ua-parser-js';
import type { ProfileBuilder } from './segment-traits.js';

/**
 * What a Segment message's `context` gives the profile (docs/segment.md, "Context"): the campaign
 * as utm_source and utm_* attributes, the user agent as device_type, and the client's address as
 * the account's setting says.
 */

/** What the account keeps of a visitor's address: all of it, the network part only, or nothing. */
export type AddressPolicy = 'keep' | 'truncate' | 'drop';
export const addressPolicies: readonly AddressPolicy[] = ['keep', 'truncate', 'drop'];
export const defaultAddressPolicy: AddressPolicy = 'truncate';

export const isAddressPolicy = (value: unknown): value is AddressPolicy => typeof value === 'string' && (addressPolicies as readonly string[]).includes(value);

/** Segment's campaign fields and the attributes they become; utm_source is the spec 2.2 attribute. */
const campaignKeys: Record<string, string> = { source: 'utm_source', medium: 'utm_medium', name: 'utm_campaign', term: 'utm_term', content: 'utm_content' };

const maxContextText = 1000;

const textOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.slice(0, maxContextText) : typeof value === 'number' ? String(value) : null);

/**
 * An address with its host part cleared: the last octet of IPv4 (203.0.113.7 → 203.0.113.0), all
 * but the first 48 bits of IPv6 (a site's prefix), as Google Analytics anonymizes them.
 */
export function truncatedAddress(address: string): string | null {
  const version = isIP(address);
  if (version === 4) return address.replace(/\.\d+$/, '.0');
  if (version !== 6) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return truncatedAddress(mapped[1] as string);
  const [head = '', tail] = address.split('::');
  const groups = head === '' ? [] : head.split(':');
  const missing = 8 - groups.length - (tail === undefined || tail === '' ? 0 : tail.split(':').length);
  const full = tail === undefined ? groups : [...groups, ...Array<string>(missing).fill('0'), ...(tail === '' ? [] : tail.split(':'))];
  return `${full.slice(0, 3).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::`;
}

/** The address kept under the account's policy; null when none is. */
export function keptAddress(address: string | undefined, policy: AddressPolicy): string | null {
  if (address === undefined || policy === 'drop' || isIP(address) === 0) return null;
  return policy === 'keep' ? address : truncatedAddress(address);
}

/**
 * The device_type of a user agent: ua-parser-js's device type (mobile, tablet, smarttv, console,
 * wearable, embedded), `desktop` for a browser it knows on no such device, nothing for a client it
 * does not know (a server library).
 */
export function deviceTypeOf(userAgent: string): string | null {
  const parser = new UAParser(userAgent.slice(0, maxContextText));
  const type = parser.getDevice().type;
  if (type) return type;
  return parser.getBrowser().name ? 'desktop' : null;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a context carries a campaign (a landing from a tagged link). */
export function hasCampaign(context: unknown): boolean {
  if (!isObject(context) || !isObject(context.campaign)) return false;
  for (const [key, value] of Object.entries(context.campaign)) if (campaignKeys[key] !== undefined && textOf(value) !== null) return true;
  return false;
}

/**
 * Adds what the context says of the person to `profile`, filling only what the traits left
 * unset. `address` is the client's address (context.ip, or the page's own when sent from a page).
 */
export function addContext(profile: ProfileBuilder, context: unknown, address: string | undefined, policy: AddressPolicy): void {
  const ctx = isObject(context) ? context : {};
  if (isObject(ctx.campaign)) {
    for (const [key, value] of Object.entries(ctx.campaign)) {
      const text = textOf(value);
      const target = campaignKeys[key];
      if (text === null || target === undefined) continue;
      if (target === 'utm_source') profile.contextProfile('utm_source', text);
      else profile.contextAttribute(target, text);
    }
  }
  const userAgent = textOf(ctx.userAgent);
  const deviceType = userAgent === null ? textOf(isObject(ctx.device) ? ctx.device.type : undefined) : deviceTypeOf(userAgent);
  if (deviceType !== null) profile.contextProfile('device_type', deviceType);
  // An address sent as a trait is kept as the policy says, as the context's is.
  const sent = profile.fields.attributes.ip ?? (typeof ctx.ip === 'string' ? ctx.ip : address);
  const kept = typeof sent === 'string' ? keptAddress(sent, policy) : null;
  if (kept === null) delete profile.fields.attributes.ip;
  else profile.fields.attributes.ip = kept;
}

/** `context.library` as `name version`, for Warnings: which app sent a refused message. */
export function libraryOf(context: unknown): string | undefined {
  const library = isObject(context) && isObject(context.library) ? context.library : null;
  const name = textOf(library?.name);
  if (name === null) return undefined;
  const version = textOf(library?.version);
  return (version === null ? name : `${name} ${version}`).slice(0, 200);
}
