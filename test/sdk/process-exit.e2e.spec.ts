import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { TestProxy } from '../support/sdk-proxy.js';
import { projectRoot } from '../../src/paths.js';

const run = promisify(execFile);

/** A script that queues 25 events and a profile, then does `then` (by default: nothing, it just ends). */
const script = (then = '') => `
import { TrackingClient } from '@tracking-ingestion/sdk';
const options = JSON.parse(process.env.CLIENT_OPTIONS);
const client = new TrackingClient({ ...options, onError: options.onError ? (error) => console.log('onError', error.name, error.message) : undefined });
for (let i = 0; i < 25; i += 1) client.track({ userId: 'u-exit', eventName: 'e-' + i });
client.identify({ userId: 'u-exit', attributes: {} });
${then}
`;

/** How a Node.js process that uses the SDK ends: a child process running a script, against the real service. */
describe('SDK and process exit (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let proxy: TestProxy;
  servedApp((started) => ({ app, account } = started));
  beforeEach(async () => {
    proxy = await TestProxy.start(app.baseUrl);
  });
  afterEach(() => proxy.stop());

  /** Runs `source` in a child node process; a process the SDK held forever fails at the timeout. */
  async function runScript(source: string, options: Record<string, unknown> = {}): Promise<{ stdout: string; stderr: string }> {
    const clientOptions = { baseUrl: proxy.baseUrl, licenseCode: account.licenseCode, accessToken: account.accessToken, ...options };
    return run(process.execPath, ['--input-type=module', '--eval', source], {
      cwd: projectRoot,
      env: { ...process.env, CLIENT_OPTIONS: JSON.stringify(clientOptions) },
      timeout: 20_000,
    });
  }

  const storedTypes = async () => (await app.events()).map((event) => event.event_type).sort();
  const expected = [...Array<string>(25).fill('EventTracked'), 'UserUpserted'].sort();

  it('a script that queues items and simply ends has delivered them all (default options: the flush timer holds the process)', async () => {
    const { stderr } = await runScript(script());
    expect(stderr).to.equal('');
    expect(await storedTypes()).to.deep.equal(expected);
  });

  it('with flushIntervalMs 0, items that wait for flushAt are sent when the script ends', async () => {
    const { stderr } = await runScript(script(), { flushAt: 100, flushIntervalMs: 0 });
    expect(stderr).to.equal('');
    expect(await storedTypes()).to.deep.equal(expected);
    expect(proxy.seen).to.have.length(2);
  });

  it('the process stays until a batch waiting for its retry is delivered', async () => {
    proxy.plan = (_request, index) => (index === 0 ? { kind: 'answer', status: 503, headers: { 'retry-after': '1' }, body: { error: 'busy', code: 503 } } : { kind: 'forward' });
    await runScript(script(), { flushIntervalMs: 0 });
    expect(await storedTypes()).to.deep.equal(expected);
    expect(proxy.seen.length).to.be.at.least(3);
  });

  it('an idle client, and one closed, let the process end', async () => {
    const { stdout } = await runScript(
      `${script('await client.close();')}
      new TrackingClient({ ...options });
      console.log('closed', JSON.stringify(client.stats()));`,
    );
    expect(stdout.trim()).to.equal('closed {"queued":0,"inFlight":0,"sent":26,"failed":0,"retried":0}');
    expect(await storedTypes()).to.deep.equal(expected);
  });

  it('process.exit() with items not yet delivered reports them, to onError or else to stderr', async () => {
    const { stderr } = await runScript(script('process.exit(0);'), { flushIntervalMs: 0, flushAt: 100 });
    expect(stderr.trim()).to.equal(
      'UndeliveredAtExitError: process exiting with 26 tracking items not delivered (26 queued, 0 in flight): await client.close() before the process exits',
    );
    const { stdout } = await runScript(script('process.exit(0);'), { flushIntervalMs: 0, flushAt: 100, onError: true });
    expect(stdout.trim()).to.match(/^onError UndeliveredAtExitError process exiting with 26 tracking items not delivered/);
    expect(await app.events()).to.have.length(0);
  });
});
