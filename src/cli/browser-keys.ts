import { findAccount } from '../accounts/accounts.js';
import { addBrowserKey, BrowserKeyLimitReached, browserKeyFields, listBrowserKeys, revokeBrowserKey, type BrowserKey } from '../accounts/browser-keys.js';
import { CliError, withContext } from './context.js';
import { instantText } from './instant-text.js';

/** `tracking accounts browser-keys | add-browser-key | revoke-browser-key` (docs/browser.md, Browser keys). */

export interface BrowserKeyOptions {
  json: boolean;
  label?: string;
  origins?: string[];
}

export const browserKeyUsage = {
  list: 'usage: tracking accounts browser-keys <license>',
  add: 'usage: tracking accounts add-browser-key <license> --label <label> --origin <origin> [--origin <origin> ...]',
  revoke: 'usage: tracking accounts revoke-browser-key <license> <id>',
};

/** The columns of the list, each as wide as its widest cell (the last one as it is), two spaces apart. */
function table(keys: BrowserKey[]): string[] {
  const rows = [
    ['id', 'label', 'origins', 'created', 'last used'],
    // The service keeps a key's last use to the minute: shown so.
    ...keys.map((k) => [k.id, k.label, k.origins.join(' '), instantText(k.createdAt), instantText(k.lastUsedAt, { none: 'never', precision: 'minute' })]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  '));
}

async function list(license: string, json: boolean): Promise<void> {
  const keys = await withContext(async ({ pool }) => {
    const account = await findAccount(pool, license);
    return account ? listBrowserKeys(pool, account.id) : null;
  });
  if (!keys) throw new CliError(`no account with license code ${license}`);
  if (json) console.log(JSON.stringify(keys));
  else if (keys.length === 0) console.log('no browser keys');
  else for (const line of table(keys)) console.log(line);
}

async function add(license: string, options: BrowserKeyOptions): Promise<void> {
  if (!options.origins?.length) throw new CliError(`--origin is required: at least one origin, such as https://shop.example.com\n${browserKeyUsage.add}`, 2);
  // The checks of the API's POST .../browser-keys: each problem names its field (label, origin "...").
  const fields = browserKeyFields({ label: options.label, origins: options.origins }, true);
  if ('problem' in fields) throw new CliError(`${fields.problem}\n${browserKeyUsage.add}`, 2);
  const { label = '', origins = [] } = fields;
  const created = await withContext(async ({ pool }) => {
    try {
      return await addBrowserKey(pool, license, label, origins);
    } catch (error) {
      if (error instanceof BrowserKeyLimitReached) throw new CliError(error.message);
      throw error;
    }
  });
  if (!created) throw new CliError(`no account with license code ${license}`);
  if (options.json) {
    console.log(JSON.stringify(created));
    return;
  }
  console.log(`browser key created: ${created.label}, id ${created.id}`);
  console.log(`  browser key: ${created.browserKey}  (shown once; public by design: it posts items from these origins only)`);
  console.log(`  origins: ${created.origins.join(' ')}`);
}

async function revoke(license: string, id: string, json: boolean): Promise<void> {
  const result = await withContext(async ({ pool }) => {
    const account = await findAccount(pool, license);
    if (!account) return 'unknown-account';
    return (await revokeBrowserKey(pool, account.id, id)) ? 'revoked' : 'unknown-key';
  });
  if (result === 'unknown-account') throw new CliError(`no account with license code ${license}`);
  if (result === 'unknown-key') throw new CliError(`no active browser key ${id} in this account`);
  if (json) console.log(JSON.stringify({ revoked: id }));
  else console.log(`browser key ${id} revoked: the running service refuses it within 2 s`);
}

/** Runs a browser-key action of `tracking accounts`; false when `action` is none of them. */
export async function browserKeyCommand(action: string | undefined, rest: string[], options: BrowserKeyOptions): Promise<boolean> {
  if (action === 'browser-keys') {
    const [license] = rest;
    if (!license || rest.length > 1) throw new CliError(browserKeyUsage.list, 2);
    await list(license, options.json);
    return true;
  }
  if (action === 'add-browser-key') {
    const [license] = rest;
    if (!license || rest.length > 1) throw new CliError(browserKeyUsage.add, 2);
    await add(license, options);
    return true;
  }
  if (action === 'revoke-browser-key') {
    const [license, id] = rest;
    if (!license || !id || rest.length > 2) throw new CliError(browserKeyUsage.revoke, 2);
    await revoke(license, id, options.json);
    return true;
  }
  return false;
}
