import { randomBytes } from 'node:crypto';
import type { Account } from './account.js';
import * as sql from './browser-keys-sql.js';
import { addBrowserKey, changeBrowserKey, revokeBrowserKey, type BrowserKey, type BrowserKeyFields, type CreatedBrowserKey } from './browser-keys.js';
import { hashToken, matchingIndex } from './token-hash.js';
import { UseMarks } from './use-marks.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';

/** Who a presented browser key is: its account, the key, and the origins it allows. */
export interface AuthenticatedBrowserKey {
  account: Account;
  keyId: string;
  origins: readonly string[];
}

interface KnownKey {
  id: string;
  hash: Buffer;
  origins: string[];
}

interface AccountKeys {
  account: Account;
  keys: KnownKey[];
}

interface ChangedKeyRow {
  id: string;
  account_id: string;
  name: string;
  license_code: string;
  key_hash: Buffer;
  origins: string[];
  revoked: boolean;
}

/** Compared against when a license code has no key, so that every case does the same work. */
const noKeyHash = [hashToken(randomBytes(24).toString('base64url'))];

/**
 * Every active browser key of every account, in memory (each account has at most 20, with at most
 * 50 origins each), so that a browser's request is checked without a query. The copy is at most
 * `maxAgeMs` old: a request that finds it older first reads the keys changed since the last look
 * (one round trip, shared by the requests waiting for it). So a change made by any process is in
 * effect everywhere within `maxAgeMs`, and in the process that made it at once.
 */
export class BrowserKeyRegistry {
  private readonly byLicense = new Map<string, AccountKeys>();
  /** The license code of each key id: a key changed or revoked is found without a scan. */
  private readonly licenseOfKey = new Map<string, string>();
  /** The license code of each active key's hash (hex). */
  private readonly licenseOfHash = new Map<string, string>();
  private xmin: string | null = null;
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;
  /** last_used_at of the keys, marked off the request path. */
  private readonly used: UseMarks;

  constructor(
    private readonly pool: Pool,
    private readonly maxAgeMs = 2_000,
    private readonly log?: Logger,
  ) {
    this.used = new UseMarks(pool, sql.markBrowserKeysUsed, 'a browser key', log);
  }

  async authenticate(licenseCode: string, key: string): Promise<AuthenticatedBrowserKey | null> {
    await this.fresh();
    const entry = this.byLicense.get(licenseCode);
    const keys = entry?.keys ?? [];
    const index = matchingIndex(hashToken(key), keys.length > 0 ? keys.map((k) => k.hash) : noKeyHash);
    const matched = index >= 0 ? keys[index] : undefined;
    if (!entry || !matched) return null;
    this.used.mark(matched.id);
    return { account: entry.account, keyId: matched.id, origins: matched.origins };
  }

  /**
   * A browser key presented without a license code (a Segment write key, docs/segment.md): found
   * by its hash among every active key, then compared as authenticate() does.
   */
  async authenticateKey(key: string): Promise<AuthenticatedBrowserKey | null> {
    await this.fresh();
    const hash = hashToken(key);
    const license = this.licenseOfHash.get(hash.toString('hex'));
    return license === undefined ? null : this.authenticate(license, key);
  }

  async add(licenseCode: string, label: string, origins: string[]): Promise<CreatedBrowserKey | null> {
    const created = await addBrowserKey(this.pool, licenseCode, label, origins);
    await this.readAfterChange();
    return created;
  }

  async change(accountId: string, keyId: string, fields: BrowserKeyFields): Promise<BrowserKey | null> {
    const changed = await changeBrowserKey(this.pool, accountId, keyId, fields);
    await this.readAfterChange();
    return changed;
  }

  async revoke(accountId: string, keyId: string): Promise<boolean> {
    const revoked = await revokeBrowserKey(this.pool, accountId, keyId);
    await this.readAfterChange();
    return revoked;
  }

  private fresh(): Promise<void> {
    if (Date.now() - this.readAt <= this.maxAgeMs) return Promise.resolve();
    return this.readNow();
  }

  /**
   * After a change committed here: a read that began before it may have missed it, so it is waited
   * out and a new one made. The change is stored whatever this read does: a failure of it is
   * logged, and the next request reads again (the copy is not marked fresh).
   */
  private async readAfterChange(): Promise<void> {
    await this.reading?.catch(() => undefined);
    await this.readNow().catch((error: unknown) => this.log?.warn({ err: error }, 'browser keys not read again after a change: the next request reads them'));
  }

  /** Reads the changes since the last look; callers at the same time share one read. */
  private readNow(): Promise<void> {
    this.reading ??= this.readChanges().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readChanges(): Promise<void> {
    const startedAt = Date.now();
    const { rows: marks } = await this.pool.query<{ next_xmin: string }>(sql.currentXmin);
    const { rows } = await this.pool.query<ChangedKeyRow>(sql.selectChangedBrowserKeys, [this.xmin]);
    for (const row of rows) this.apply(row);
    this.xmin = marks[0]?.next_xmin ?? this.xmin;
    this.readAt = startedAt;
  }

  private apply(row: ChangedKeyRow): void {
    const license = this.licenseOfKey.get(row.id) ?? row.license_code;
    const entry = this.byLicense.get(license);
    const others = entry?.keys.filter((k) => k.id !== row.id) ?? [];
    for (const key of entry?.keys ?? []) if (key.id === row.id) this.licenseOfHash.delete(key.hash.toString('hex'));
    if (row.revoked) {
      this.licenseOfKey.delete(row.id);
      if (others.length === 0) this.byLicense.delete(license);
      else if (entry) entry.keys = others;
      return;
    }
    this.licenseOfKey.set(row.id, row.license_code);
    this.licenseOfHash.set(row.key_hash.toString('hex'), row.license_code);
    const account = { id: row.account_id, name: row.name, licenseCode: row.license_code };
    this.byLicense.set(row.license_code, { account, keys: [...others, { id: row.id, hash: row.key_hash, origins: row.origins }] });
  }
}
