import type { NavigatorLike } from './env.js';

export type DeviceType = 'mobile' | 'tablet' | 'desktop';

/**
 * The device's kind: User-Agent Client Hints where the browser has them (Chromium), else the
 * User-Agent. An iPad asks for the desktop site with a Mac's User-Agent: a touch screen tells it.
 */
export function deviceType(navigator: Pick<NavigatorLike, 'userAgent' | 'userAgentData' | 'maxTouchPoints'>): DeviceType {
  const agent = navigator.userAgent;
  if (navigator.userAgentData?.mobile) return 'mobile';
  if (/iPad|Tablet|PlayBook|Silk|Kindle|Android(?!.*Mobi)/i.test(agent)) return 'tablet';
  if (/Mobi|iPhone|iPod|Android|Opera Mini|IEMobile|BlackBerry/i.test(agent)) return 'mobile';
  if (/Macintosh/.test(agent) && (navigator.maxTouchPoints ?? 0) > 1) return 'tablet';
  return 'desktop';
}

/** Custom attribute names the service takes. */
const attributeName = /^[a-z][a-z0-9_]{0,99}$/;

/**
 * The campaign of a landing URL's query: `utm_source` is a system attribute (top level), the other
 * `utm_*` go among the custom attributes. Null when the URL has none.
 */
export function campaignOf(search: string): { utm_source?: string; attributes: Record<string, string> } | null {
  const campaign: { utm_source?: string; attributes: Record<string, string> } = { attributes: {} };
  let found = false;
  new URLSearchParams(search).forEach((value, name) => {
    if (!name.startsWith('utm_') || !attributeName.test(name) || value === '') return;
    found = true;
    if (name === 'utm_source') campaign.utm_source = value;
    else campaign.attributes[name] = value;
  });
  return found ? campaign : null;
}
