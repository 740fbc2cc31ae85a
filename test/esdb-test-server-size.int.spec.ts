import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { EventStoreDBClient, MaxAppendSizeExceededError, StreamNotFoundError, jsonEvent, type JSONEventData } from '@eventstore/db-client';
import { EsdbTestServer } from '../testing/esdb-test-server.js';

const mib = 1024 * 1024;
const type = 'Sized';
const metadata = { source: 'spec' };

/** An event the server counts as exactly `size` bytes: its JSON data, its metadata, its type twice. */
function sizedEvent(size: number): JSONEventData {
  const overhead = Buffer.byteLength(JSON.stringify({ blob: '' })) + Buffer.byteLength(JSON.stringify(metadata)) + 2 * type.length;
  return jsonEvent({ id: randomUUID(), type, data: { blob: 'x'.repeat(size - overhead) }, metadata });
}

async function refusal(write: Promise<unknown>): Promise<unknown> {
  try {
    await write;
  } catch (error) {
    return error;
  }
  throw new Error('the write was accepted');
}

describe('EsdbTestServer: the 1 MiB write limit of servers up to v25.0 (int)', () => {
  let server: EsdbTestServer;
  let client: EventStoreDBClient;

  beforeEach(async () => {
    server = await EsdbTestServer.start();
    client = EventStoreDBClient.connectionString(server.connectionString);
  });
  afterEach(async () => {
    await client.dispose();
    await server.close();
  });

  const storesNothingOf = async (stream: string): Promise<void> => {
    expect(server.size).to.equal(0);
    expect(await refusal(client.readStream(stream).toArray())).to.be.instanceOf(StreamNotFoundError);
  };

  it('accepts a write of exactly 1 MiB and refuses one byte more whole, on BatchAppend', async () => {
    await client.appendToStream('at-limit', [sizedEvent(mib / 2), sizedEvent(mib / 2)]);
    expect(server.size).to.equal(2);
    const error = await refusal(client.appendToStream('over', [sizedEvent(mib / 2), sizedEvent(mib / 2 + 1)]));
    expect(error).to.be.instanceOf(MaxAppendSizeExceededError);
    expect((error as MaxAppendSizeExceededError).maxAppendSize).to.equal(mib);
    expect(server.size).to.equal(2);
    expect(server.calls).to.deep.equal({ batchAppend: 1, append: 0 });
  });

  it('refuses a write sent in several BatchAppend messages once past the limit, and goes on serving the call', async () => {
    // The client cuts a write into messages of about 3 MiB: this one is four.
    const events = Array.from({ length: 10 }, () => sizedEvent(mib));
    expect(await refusal(client.appendToStream('huge', events))).to.be.instanceOf(MaxAppendSizeExceededError);
    await storesNothingOf('huge');
    await client.appendToStream('after', [sizedEvent(100)]);
    expect(server.size).to.equal(1);
    expect(server.calls.batchAppend).to.equal(1);
  });

  it('refuses a write over the limit on the unary Append too', async () => {
    const credentials = { username: 'admin', password: 'changeit' };
    const error = await refusal(client.appendToStream('over', [sizedEvent(mib + 1)], { credentials }));
    expect(error).to.be.instanceOf(MaxAppendSizeExceededError);
    expect((error as MaxAppendSizeExceededError).maxAppendSize).to.equal(mib);
    await storesNothingOf('over');
    expect(server.calls).to.deep.equal({ batchAppend: 0, append: 1 });
  });

  it('takes another limit, or none, per test', async () => {
    server.maxAppendSize = 1000;
    expect(await refusal(client.appendToStream('small', [sizedEvent(1001)]))).to.be.instanceOf(MaxAppendSizeExceededError);
    server.maxAppendSize = null;
    await client.appendToStream('large', [sizedEvent(2 * mib)]);
    expect(server.size).to.equal(1);
  });
});
