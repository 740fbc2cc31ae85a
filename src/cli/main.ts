import { parseArgs } from 'node:util';
import { accountsCommand } from './accounts.js';
import { auditCommand } from './audit.js';
import { CliError } from './context.js';
import { eraseCommand, erasuresCommand } from './erase.js';
import { exportCommand } from './export.js';
import { importCommand } from './import.js';
import { importUsage, importUsageLine } from './import-options.js';
import { projectionsCommand } from './projections.js';

const usage = `usage: tracking <command> [--json]

  projections status              per projection: events applied, lag, parked events, rebuild; the
                                  workers, the parts they hold, and the accounts furthest behind
  projections rebuild <name|all> [--account <license|id>]
                                  empty a projection's read models and replay every stored event;
                                  with --account, only that account's (the others go on)
  projections retry <name|all>    apply the events a projection parked again; those that apply are unparked
  audit <trackID>                 the stored events of a trackID, and their stream up to them
  accounts create <name>          a new account; prints its license code and access token
  accounts list                   license codes and names (never tokens)
  accounts rotate-token <license> revoke every access token of the account and make one new (ingest+read)
  accounts tokens <license>       the account's active access tokens: id, scope, created, last used, label
  accounts add-token <license> --label <label> --scope ingest|ingest+read
                                  a new access token (printed once); ingest posts items only
  accounts revoke-token <license> <id>
                                  revoke one access token (not the account's last active one)
  accounts browser-keys <license> the account's active browser keys: id, label, origins, created, last used
  accounts add-browser-key <license> --label <label> --origin <origin> [--origin <origin> ...]
                                  a new browser key for web pages of these origins (printed once):
                                  it only posts items, from those origins (docs/browser.md)
  accounts revoke-browser-key <license> <id>
                                  revoke one browser key: refused by the running service within 2 s
  erase --account <license|id> [--user <userId>] [--anonymous <anonymousId>] [--suppress] [--no-wait]
                                  erase a person (by either id, or both): request it, wait until it
                                  is done (about 7 s) and print what was erased; --suppress also
                                  refuses their ids' new items; --no-wait prints the request and exits
  erasures --account <license|id> [--limit N]
                                  the account's erasures, the latest first (default 50): state, who,
                                  when requested and done, what was erased
  export --account <license|id> [--out <file>] [--format ndjson|csv|parquet] [--kind <kind>] [--name <eventName>]
         [--user <id>] [--time received|event] [--from <date>] [--to <date>] [--after <cursor>]
                                  the account's events, opened, to stdout or a file (docs/export.md);
                                  a file cut off (Ctrl-C, kill) is continued by the same command
${importUsageLine}

Uses DATABASE_URL, or the embedded database in DATA_DIR (default ./data) as npm start does.
With no database in DATA_DIR, accounts create makes a new empty one; the other commands refuse.
import talks to a running service over HTTP instead (tracking import --help for its options).`;

/** The arguments; an unknown option or one without its value is a usage error (exit 2). */
function parsedArgs() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        label: { type: 'string' },
        scope: { type: 'string' },
        origin: { type: 'string', multiple: true },
        url: { type: 'string' },
        license: { type: 'string' },
        token: { type: 'string' },
        format: { type: 'string' },
        account: { type: 'string' },
        user: { type: 'string' },
        anonymous: { type: 'string' },
        suppress: { type: 'boolean', default: false },
        'no-wait': { type: 'boolean', default: false },
        limit: { type: 'string' },
        out: { type: 'string' },
        kind: { type: 'string' },
        name: { type: 'string' },
        time: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        after: { type: 'string' },
      },
    });
  } catch (error) {
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) throw new CliError(`${error.message}\n\n${usage}`, 2);
    throw error;
  }
}

/** Runs the command; resolves with the exit code. */
async function main(): Promise<number> {
  const { positionals, values } = parsedArgs();
  const [command, ...args] = positionals;
  const json = values.json === true;
  if (command === 'import') {
    if (values.help) {
      console.log(importUsage);
      return 0;
    }
    const { url, license, token, format } = values;
    return importCommand(args, { url, license, token, format, json });
  }
  if (values.help || !command || command === 'help') {
    console.log(usage);
    return 0;
  }
  if (command === 'projections') await projectionsCommand(args, { json, account: values.account });
  else if (command === 'audit') await auditCommand(args, json);
  else if (command === 'erase') {
    const { account, user, anonymous, suppress } = values;
    await eraseCommand(args, { account, user, anonymous, suppress: suppress === true, wait: values['no-wait'] !== true, json });
  } else if (command === 'erasures') await erasuresCommand(args, { account: values.account, limit: values.limit, json });
  else if (command === 'export') {
    const { format, kind, name, user, time, from, to } = values;
    await exportCommand(args, { account: values.account, out: values.out, after: values.after, params: { format, kind, name, user, time, from, to } });
  } else if (command === 'accounts') await accountsCommand(args, { json, label: values.label, scope: values.scope, origins: values.origin });
  else throw new CliError(`unknown command '${command}'\n\n${usage}`, 2);
  return 0;
}

try {
  process.exit(await main());
} catch (error) {
  if (error instanceof CliError) {
    console.error(`tracking: ${error.message}`);
    process.exit(error.exitCode);
  }
  const message = error instanceof Error ? error.message : String(error);
  console.error(`tracking: ${message}`);
  process.exit(1);
}
