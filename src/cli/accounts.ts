import { addToken, isTokenScope, labelProblem, listTokens, revokeToken, TokenChangeRefused, tokenScopes } from '../accounts/tokens.js';
import { createAccount, findAccount, listAccounts } from '../accounts/accounts.js';
import { rotateToken } from '../accounts/tokens.js';
import { accountNameProblem } from '../accounts/accounts-text.js';
import { CliError, withContext } from './context.js';
import { instantText } from './instant-text.js';
import { browserKeyCommand } from './browser-keys.js';

export interface AccountsOptions {
  json: boolean;
  label?: string;
  scope?: string;
  /** The `--origin` options of add-browser-key, in order. */
  origins?: string[];
}

const usage =
  'usage: tracking accounts create <name> | list | rotate-token <license> | tokens <license>' +
  ' | add-token <license> --label <label> --scope ingest|ingest+read | revoke-token <license> <id>' +
  ' | browser-keys <license> | add-browser-key <license> --label <label> --origin <origin> [--origin <origin> ...] | revoke-browser-key <license> <id>';

/** Token changes the service refuses (20 active, the last active one) are the user's to fix: exit 1. */
async function refusalsAsCliErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TokenChangeRefused) throw new CliError(error.message);
    throw error;
  }
}

export async function accountsCommand(args: string[], options: AccountsOptions): Promise<void> {
  const { json } = options;
  const [action, ...rest] = args;
  if (action === 'create') {
    const name = rest.join(' ').trim();
    if (!name) throw new CliError('usage: tracking accounts create <name>', 2);
    const problem = accountNameProblem(name);
    if (problem) throw new CliError(`${problem}\nusage: tracking accounts create <name>`, 2);
    const account = await withContext(({ pool }) => createAccount(pool, name), { createDatabase: true });
    const shown = { name: account.name, licenseCode: account.licenseCode, accessToken: account.accessToken };
    if (json) console.log(JSON.stringify(shown));
    else console.log(`account created: ${shown.name}\n  license code: ${shown.licenseCode}\n  access token: ${shown.accessToken}  (shown once)`);
    return;
  }
  if (action === 'list') {
    const accounts = await withContext(({ pool }) => listAccounts(pool));
    if (json) {
      console.log(JSON.stringify(accounts.map(({ name, licenseCode, createdAt }) => ({ name, licenseCode, createdAt }))));
      return;
    }
    if (accounts.length === 0) console.log('no accounts');
    for (const a of accounts) console.log(`${a.licenseCode}  ${instantText(a.createdAt)}  ${a.name}`);
    return;
  }
  if (action === 'rotate-token') {
    const license = rest[0];
    if (!license) throw new CliError('usage: tracking accounts rotate-token <license>', 2);
    const account = await withContext(({ pool }) => rotateToken(pool, license));
    if (!account) throw new CliError(`no account with license code ${license}`);
    if (json) console.log(JSON.stringify({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    else console.log(`new access token for ${account.name}: ${account.accessToken}  (shown once; every earlier token is revoked and stops working within 30 s)`);
    return;
  }
  if (action === 'tokens') {
    const license = rest[0];
    if (!license || rest.length > 1) throw new CliError('usage: tracking accounts tokens <license>', 2);
    const tokens = await withContext(async ({ pool }) => {
      const account = await findAccount(pool, license);
      return account ? listTokens(pool, account.id) : null;
    });
    if (!tokens) throw new CliError(`no account with license code ${license}`);
    if (json) {
      console.log(JSON.stringify(tokens));
      return;
    }
    // The service keeps a token's last use to the minute (docs/decisions.md): shown so.
    for (const t of tokens) {
      const lastUsed = instantText(t.lastUsedAt, { none: 'never', precision: 'minute' });
      console.log(`${t.id}  ${t.scope.padEnd(11)}  created ${instantText(t.createdAt)}  last used ${lastUsed}  ${t.label}`);
    }
    return;
  }
  if (action === 'add-token') {
    const license = rest[0];
    const usageText = 'usage: tracking accounts add-token <license> --label <label> --scope ingest|ingest+read';
    if (!license || rest.length > 1) throw new CliError(usageText, 2);
    const problem = labelProblem(options.label);
    if (problem) throw new CliError(`${problem}\n${usageText}`, 2);
    if (!isTokenScope(options.scope)) throw new CliError(`scope must be one of ${tokenScopes.join(', ')}\n${usageText}`, 2);
    const { label, scope } = options;
    const created = await refusalsAsCliErrors(() => withContext(({ pool }) => addToken(pool, license, label as string, scope)));
    if (!created) throw new CliError(`no account with license code ${license}`);
    if (json) console.log(JSON.stringify(created));
    else console.log(`access token created: ${created.label} (${created.scope}), id ${created.id}\n  access token: ${created.accessToken}  (shown once)`);
    return;
  }
  if (action === 'revoke-token') {
    const [license, id] = rest;
    if (!license || !id || rest.length > 2) throw new CliError('usage: tracking accounts revoke-token <license> <id>', 2);
    const result = await refusalsAsCliErrors(() => withContext(({ pool }) => revokeToken(pool, license, id)));
    if (result === 'unknown-account') throw new CliError(`no account with license code ${license}`);
    if (result === 'unknown-token') throw new CliError(`no active access token ${id} in this account`);
    if (json) console.log(JSON.stringify({ revoked: id }));
    else console.log(`access token ${id} revoked: the running service refuses it within 30 s, and its sessions end at once`);
    return;
  }
  if (await browserKeyCommand(action, rest, options)) return;
  throw new CliError(usage, 2);
}
