/** Chrome caps a cookie's lifetime at 400 days; others allow more, none needs more. */
export const cookieMaxAgeSeconds = 400 * 24 * 3600;
/** The SDK's cookies together stay under this, as a request's Cookie header carries them: large cookies break sites behind proxies. */
export const cookieBudgetBytes = 200;

/** A cookie's value in a `document.cookie` text, undefined when absent or unreadable. */
export function readCookie(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0 && part.slice(0, equals).trim() === name) {
      try {
        return decodeURIComponent(part.slice(equals + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Whether cookies of these values (undefined: not set) fit the budget, as `a=1; b=2`, values URI-encoded. */
export function fitsCookieBudget(cookies: Record<string, string | undefined>): boolean {
  const pairs = Object.entries(cookies).filter(([, value]) => value !== undefined);
  const bytes = pairs.reduce((sum, [name, value]) => sum + name.length + 1 + encodeURIComponent(value as string).length, 0);
  return bytes + 2 * Math.max(0, pairs.length - 1) < cookieBudgetBytes;
}

/**
 * The domains a cookie of `hostname` may be tried on, widest first: `example.com` before
 * `shop.example.com`. None for an IP address or a one-label host (localhost): those cookies are host-only.
 */
export function domainCandidates(hostname: string): string[] {
  if (!hostname.includes('.') || /^[\d.]+$/.test(hostname) || hostname.includes(':')) return [];
  const labels = hostname.split('.');
  const candidates: string[] = [];
  for (let index = labels.length - 2; index >= 0; index -= 1) candidates.push(labels.slice(index).join('.'));
  return candidates;
}

/** A `document.cookie` assignment: first-party, for the whole site, never sent cross-site but on top-level navigations. */
export function cookieText(name: string, value: string, maxAgeSeconds: number, domain: string | undefined, secure: boolean): string {
  return `${name}=${encodeURIComponent(value)}; Max-Age=${maxAgeSeconds}; Path=/; SameSite=Lax${domain ? `; Domain=${domain}` : ''}${secure ? '; Secure' : ''}`;
}

/**
 * The SDK's cookies on the widest domain the browser lets the page set (a public suffix such as
 * `co.uk` never reads back), found once by writing a probe cookie on each candidate, widest first,
 * on the first write: a page without consent writes nothing, not even the probe.
 */
export class CookieJar {
  private domain: string | undefined | null;

  constructor(
    private readonly document: { cookie: string },
    private readonly hostname: string,
    private readonly secure: boolean,
    cookieDomain?: string,
  ) {
    this.domain = cookieDomain ?? null;
  }

  get(name: string): string | undefined {
    return readCookie(this.document.cookie, name);
  }

  set(name: string, value: string): void {
    this.document.cookie = cookieText(name, value, cookieMaxAgeSeconds, this.siteDomain(), this.secure);
  }

  /** Removed on the site's domain and host-only, whichever it was written on. */
  remove(name: string): void {
    for (const domain of new Set([this.siteDomain(), undefined])) this.document.cookie = cookieText(name, '', 0, domain, this.secure);
  }

  private siteDomain(): string | undefined {
    if (this.domain === null) {
      this.domain = undefined;
      const probe = `${Math.random()}`;
      for (const domain of domainCandidates(this.hostname)) {
        this.document.cookie = cookieText('trk_probe', probe, 60, domain, this.secure);
        if (this.get('trk_probe') !== probe) continue;
        this.document.cookie = cookieText('trk_probe', '', 0, domain, this.secure);
        this.domain = domain;
        break;
      }
    }
    return this.domain;
  }
}
