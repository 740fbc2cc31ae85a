import { expect } from 'chai';
import { addBrowserKey } from '../../src/accounts/browser-keys.js';
import { instantText } from '../../src/cli/instant-text.js';
import { TestApp, type Credentials, type Reply } from '../support/app.js';
import { tracking } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { queued, uuidPattern } from '../support/replies.js';

/**
 * `tracking accounts browser-keys | add-browser-key | revoke-browser-key` (docs/browser.md): on the
 * database, as the token commands; a key the CLI makes posts items from its origins through the
 * running service, and is refused there within 2 s of its revocation.
 */

interface CreatedKey {
  id: string;
  label: string;
  origins: string[];
  createdAt: string;
  lastUsedAt: string | null;
  browserKey: string;
}

const site = 'https://shop.example.com';
const event = { anonymousId: 'visitor-1', eventName: 'page_view' };

describe('the tracking command: browser keys (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    app = await TestApp.start();
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  /** A POST as a page sends it: the key in the query string, a text/plain body, the page's Origin. */
  const fromPage = (key: string, origin: string): Promise<Reply> =>
    app.request('POST', `/v1/accounts/${account.licenseCode}/events?key=${encodeURIComponent(key)}`, undefined, {
      raw: JSON.stringify(event),
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin },
    });

  it('makes a key that posts from its origins, lists it without the key, and revokes it: refused within 2 s', async () => {
    const added = await tracking(app, 'accounts', 'add-browser-key', account.licenseCode, '--label', 'web shop', '--origin', 'HTTPS://Shop.Example.com:443/', '--origin', 'https://*.example.org');
    expect(added.code, added.stderr).to.equal(0);
    const browserKey = /^ {2}browser key: (tbk_[A-Za-z0-9_-]{32}) {2}\(shown once/m.exec(added.stdout)?.[1] as string;
    expect(browserKey, added.stdout).to.be.a('string');
    const id = /^browser key created: web shop, id (\S+)$/m.exec(added.stdout)?.[1] as string;
    expect(id).to.match(uuidPattern);
    // The origins as stored: lowercased, without the default port and the slash.
    expect(added.stdout.split('\n')).to.include(`  origins: ${site} https://*.example.org`);

    queued(await fromPage(browserKey, site));
    queued(await fromPage(browserKey, 'https://a.example.org'));
    expect((await fromPage(browserKey, 'https://evil.example')).status).to.equal(403);

    const listed = await tracking(app, 'accounts', 'browser-keys', account.licenseCode);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).not.to.contain(browserKey);
    const [header, row, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(header?.split(/\s{2,}/)).to.deep.equal(['id', 'label', 'origins', 'created', 'last used']);
    expect(rest).to.deep.equal([]);
    const json = await tracking(app, 'accounts', 'browser-keys', account.licenseCode, '--json');
    const [key] = JSON.parse(json.stdout) as Omit<CreatedKey, 'browserKey'>[];
    expect(key).to.include({ id, label: 'web shop' });
    const cells = row?.split(/\s{2,}/);
    expect(cells?.slice(0, 4)).to.deep.equal([id, 'web shop', `${site} https://*.example.org`, instantText(key?.createdAt)]);
    // Its last use, kept to the minute, written off the request path.
    const used = await eventually(async () => {
      const keys = JSON.parse((await tracking(app, 'accounts', 'browser-keys', account.licenseCode, '--json')).stdout) as CreatedKey[];
      return keys[0]?.lastUsedAt ?? undefined;
    }, 10_000, () => 'the key\'s last use');
    expect((await tracking(app, 'accounts', 'browser-keys', account.licenseCode)).stdout).to.contain(`  ${instantText(used, { precision: 'minute' })}`);

    const revoked = await tracking(app, 'accounts', 'revoke-browser-key', account.licenseCode, id);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.contain(`browser key ${id} revoked`);
    const since = Date.now();
    // The service re-reads the keys changed at most every 2 s.
    let refused: Reply | undefined;
    while (!refused && Date.now() - since < 2_000 + 500) {
      const reply = await fromPage(browserKey, site);
      if (reply.status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
      else refused = reply;
    }
    expect(refused?.status, 'the revoked key was still taken 2.5 s after the revocation').to.equal(401);
    expect((await tracking(app, 'accounts', 'browser-keys', account.licenseCode)).stdout).to.equal('no browser keys\n');
    const again = await tracking(app, 'accounts', 'revoke-browser-key', account.licenseCode, id);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain(`no active browser key ${id} in this account`);
  });

  it('prints the key once as JSON, and refuses what the API refuses, naming the field', async () => {
    const json = await tracking(app, 'accounts', 'add-browser-key', account.licenseCode, '--label', ' shop ', '--origin', 'http://localhost:5173', '--json');
    expect(json.code, json.stderr).to.equal(0);
    const created = JSON.parse(json.stdout) as CreatedKey;
    expect(created).to.include({ label: 'shop', lastUsedAt: null });
    expect(created.origins).to.deep.equal(['http://localhost:5173']);
    expect(created.browserKey).to.match(/^tbk_/);

    const refusals: [string[], number, string][] = [
      [['--origin', site], 2, 'label is required'],
      [['--label', 'shop'], 2, '--origin is required'],
      [['--label', '', '--origin', site], 2, 'label must be 1 to 100 characters'],
      [['--label', 'shop', '--origin', 'https://shop.example.com/checkout'], 2, 'origin "https://shop.example.com/checkout" must be a scheme'],
      [['--label', 'shop', '--origin', site, '--origin', 'https://*.com'], 2, 'origin "https://*.com": a wildcard'],
      [['--label', 'shop', '--origin', 'ftp://shop.example.com'], 2, 'origin "ftp://shop.example.com"'],
    ];
    for (const [options, code, message] of refusals) {
      const refused = await tracking(app, 'accounts', 'add-browser-key', account.licenseCode, ...options);
      expect(refused.code, `${options.join(' ')}: ${refused.stderr}`).to.equal(code);
      expect(refused.stderr).to.contain(message).and.contain('usage: tracking accounts add-browser-key <license> --label <label> --origin <origin>');
    }
    const unknown = await tracking(app, 'accounts', 'add-browser-key', 'ffffffffffffffffffffffff', '--label', 'shop', '--origin', site);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no account with license code ffffffffffffffffffffffff');
    expect((await tracking(app, 'accounts', 'browser-keys', 'ffffffffffffffffffffffff')).stderr).to.contain('no account with license code');
    expect((await tracking(app, 'accounts', 'revoke-browser-key', account.licenseCode, 'not-an-id')).stderr).to.contain('no active browser key not-an-id');
    expect((await tracking(app, 'accounts', 'revoke-browser-key', account.licenseCode)).code).to.equal(2);

    for (let n = 2; n <= 20; n += 1) await addBrowserKey(app.pool, account.licenseCode, `key ${n}`, [site]);
    const tooMany = await tracking(app, 'accounts', 'add-browser-key', account.licenseCode, '--label', 'one too many', '--origin', site);
    expect(tooMany.code).to.equal(1);
    expect(tooMany.stderr).to.contain('at most 20 active browser keys');
    const listed = JSON.parse((await tracking(app, 'accounts', 'browser-keys', account.licenseCode, '--json')).stdout) as CreatedKey[];
    expect(listed.map((k) => k.label)).to.deep.equal(['shop', ...Array.from({ length: 19 }, (_, i) => `key ${i + 2}`)]);
  });
});
