import { fitsCookieBudget, type CookieJar } from './cookies.js';
import type { StorageLike } from './env.js';

export const anonymousIdName = 'trk_aid';
export const userIdName = 'trk_uid';
export const optOutName = 'trk_optout';

/**
 * The visitor's ids. The cookie, shared by the site's subdomains, is the source of truth;
 * localStorage, which is per subdomain, mirrors it and is rewritten from it when they disagree, and
 * gives it back when the cookie is gone. Memory holds them while nothing may be written (consent
 * pending) or where storage is blocked.
 */
export class Identity {
  /** Whether cookies and storage may be written (consent given). */
  persist = false;
  private readonly memory = new Map<string, string>();

  constructor(
    private readonly jar: CookieJar,
    private readonly storage: StorageLike | null,
    private readonly uuid: () => string,
  ) {}

  /** The ids now, read afresh each time: another tab may have identified or reset the visitor. */
  ids(): { anonymousId: string | undefined; userId: string | undefined } {
    return { anonymousId: this.read(anonymousIdName), userId: this.read(userIdName) };
  }

  /** Makes an anonymousId when there is none; true when it did (a new visitor). */
  ensure(): boolean {
    if (this.read(anonymousIdName) !== undefined) return false;
    this.write(anonymousIdName, this.uuid());
    return true;
  }

  setUser(userId: string): void {
    this.write(userIdName, userId);
  }

  /** Sign-out: no userId, and no anonymousId: `ensure` makes the next visitor's. */
  reset(): void {
    this.remove(userIdName);
    this.remove(anonymousIdName);
  }

  /** Writes the ids held in memory: those made while consent was pending. */
  save(): void {
    for (const [name, value] of this.memory) this.write(name, value);
  }

  /** Removes the ids from memory, cookies and storage. */
  wipe(): void {
    this.memory.clear();
    for (const name of [anonymousIdName, userIdName]) {
      this.storageCall((storage) => storage.removeItem(name));
      if (this.jar.get(name) !== undefined) this.jar.remove(name);
    }
  }

  private read(name: string): string | undefined {
    const cookie = this.jar.get(name);
    const stored = this.storageCall((storage) => storage.getItem(name)) ?? undefined;
    if (this.persist) {
      if (cookie !== undefined && stored !== cookie) {
        this.storageCall((storage) => storage.setItem(name, cookie));
        // Another subdomain reset the visitor: the userId stored here was the old visitor's.
        if (name === anonymousIdName && stored !== undefined) this.storageCall((storage) => storage.removeItem(userIdName));
      } else if (cookie === undefined && stored !== undefined) this.writeCookie(name, stored);
    }
    const value = cookie ?? stored ?? (this.persist && this.storage ? undefined : this.memory.get(name));
    if (value === undefined) this.memory.delete(name);
    else this.memory.set(name, value);
    return value;
  }

  private write(name: string, value: string): void {
    this.memory.set(name, value);
    if (!this.persist) return;
    this.storageCall((storage) => storage.setItem(name, value));
    this.writeCookie(name, value);
  }

  private remove(name: string): void {
    this.memory.delete(name);
    if (!this.persist) return;
    this.storageCall((storage) => storage.removeItem(name));
    if (this.jar.get(name) !== undefined) this.jar.remove(name);
  }

  /** The userId gets a cookie only while the SDK's cookies fit the budget; else it lives in storage alone. */
  private writeCookie(name: string, value: string): void {
    if (name === userIdName && !fitsCookieBudget({ [anonymousIdName]: this.jar.get(anonymousIdName), [userIdName]: value })) {
      if (this.jar.get(name) !== undefined) this.jar.remove(name);
    } else this.jar.set(name, value);
  }

  /** Storage may be absent, or throw (quota): the cookie still holds the ids. */
  private storageCall<T>(call: (storage: StorageLike) => T): T | undefined {
    try {
      return this.storage ? call(this.storage) : undefined;
    } catch {
      return undefined;
    }
  }
}
