import { createAccount, listAccounts, rotateToken } from '../accounts.js';
import { CliError, withContext } from './context.js';

export async function accountsCommand(args: string[], json: boolean): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const name = rest.join(' ').trim();
    if (!name) throw new CliError('usage: tracking accounts create <name>', 2);
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
    for (const a of accounts) console.log(`${a.licenseCode}  ${a.createdAt}  ${a.name}`);
    return;
  }
  if (action === 'rotate-token') {
    const license = rest[0];
    if (!license) throw new CliError('usage: tracking accounts rotate-token <licenseCode>', 2);
    const account = await withContext(({ pool }) => rotateToken(pool, license));
    if (!account) throw new CliError(`no account with license code ${license}`);
    if (json) console.log(JSON.stringify({ licenseCode: account.licenseCode, accessToken: account.accessToken }));
    else console.log(`new access token for ${account.name}: ${account.accessToken}  (shown once; the old one stops working within 30 s)`);
    return;
  }
  throw new CliError('usage: tracking accounts create <name> | list | rotate-token <licenseCode>', 2);
}
