import { expect } from 'chai';
import type { Erasure } from '../../src/erasure/requests.js';
import type { Credentials, TestApp } from './app.js';
import { databaseText } from './database-text.js';
import { eventually } from './eventually.js';
import type { capturedLog } from './log-lines.js';

/** Requests an erasure through the API with the account's token and waits until it is done. */
export async function erasureDone(app: TestApp, account: Credentials, body: unknown, timeoutMs = 120_000): Promise<Erasure> {
  const authorization = `Bearer ${account.accessToken}`;
  const requested = await app.request<Erasure>('POST', `/v1/accounts/${account.licenseCode}/erasures`, body, { authorization });
  expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
  return eventually(
    async () => {
      const reply = await app.get<Erasure>(`/v1/accounts/${account.licenseCode}/erasures/${requested.body.id}`, authorization);
      return reply.body.state === 'done' ? reply.body : undefined;
    },
    timeoutMs,
    () => `erasure ${requested.body.id} never finished`,
  );
}

/** Every place the service keeps or writes anything: its database (what pg_dump writes), the EventStoreDB it writes to, its log. */
export async function everythingKept(app: TestApp, log: ReturnType<typeof capturedLog>): Promise<string> {
  return `${await databaseText(app.pool)}\n${app.esdbDouble()?.storedText() ?? ''}\n${log.written()}`;
}
