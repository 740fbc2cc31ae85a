/**
 * The origins a browser key is bound to (docs/browser.md, Browser keys): exact origins
 * (`https://shop.example.com`, `http://localhost:5173`) and wildcards of subdomains
 * (`https://*.example.com`). Both are kept normalized: lowercase, no default port, no trailing slash.
 */

export const maxOriginsPerKey = 50;
const maxOriginLength = 300;

const defaultPorts: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** A host of DNS labels (or an IPv4 address), with an optional port, lowercased. */
const hostShape = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The normalized form of an origin as a browser sends it (`Origin` header), or null for `null` and non-http(s) ones. */
export function normalizedOrigin(origin: string): string | null {
  if (origin.length > maxOriginLength) return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // URL already drops a default port and lowercases the host.
  return `${url.protocol}//${url.host}`;
}

/** An allowed origin as written by an account owner, normalized, or why it cannot be one. */
export function parseAllowedOrigin(written: unknown): { origin: string } | { problem: string } {
  if (typeof written !== 'string') return { problem: 'each origin must be a string' };
  const text = written.trim().toLowerCase().replace(/\/$/, '');
  const shown = JSON.stringify(written.slice(0, 100));
  if (text.length === 0 || text.length > maxOriginLength) return { problem: `origin ${shown} must be 1 to ${maxOriginLength} characters` };
  const match = /^(https?):\/\/(\*\.)?([^/?#@:]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) {
    return { problem: `origin ${shown} must be a scheme (http or https), a host and an optional port, such as https://shop.example.com or https://*.example.com; no path, query or user` };
  }
  const [, scheme = '', wildcard, host = '', port] = match;
  if (!hostShape.test(host)) return { problem: `origin ${shown} has no valid host name` };
  if (wildcard && !host.includes('.')) return { problem: `origin ${shown}: a wildcard must stand before a host of at least two labels (https://*.example.com)` };
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return { problem: `origin ${shown} has a port outside 1 to 65535` };
  const portPart = port === undefined || port === defaultPorts[`${scheme}:`] ? '' : `:${Number(port)}`;
  return { origin: `${scheme}://${wildcard ?? ''}${host}${portPart}` };
}

/** The normalized, deduplicated origins of a key, or the first problem. */
export function parseAllowedOrigins(written: unknown): { origins: string[] } | { problem: string } {
  if (!Array.isArray(written) || written.length === 0) return { problem: 'origins must be a non-empty array of origins, such as ["https://shop.example.com"]' };
  if (written.length > maxOriginsPerKey) return { problem: `a browser key has at most ${maxOriginsPerKey} origins, got ${written.length}` };
  const origins: string[] = [];
  for (const item of written) {
    const parsed = parseAllowedOrigin(item);
    if ('problem' in parsed) return parsed;
    if (!origins.includes(parsed.origin)) origins.push(parsed.origin);
  }
  return { origins };
}

/** Whether a normalized request origin is one of `allowed` (normalized allowed origins). */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  for (const pattern of allowed) {
    if (pattern === origin) return true;
    const star = pattern.indexOf('://*.');
    if (star < 0) continue;
    // `https://*.example.com:8443` matches `https://<one or more labels>.example.com:8443`.
    const scheme = pattern.slice(0, star + 3);
    const suffix = pattern.slice(star + 4);
    if (origin.startsWith(scheme) && origin.endsWith(suffix) && origin.length > scheme.length + suffix.length) {
      const label = origin.slice(scheme.length, origin.length - suffix.length);
      if (!label.includes(':') && !label.includes('/')) return true;
    }
  }
  return false;
}
