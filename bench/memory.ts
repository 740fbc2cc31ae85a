import type { Child } from './children.js';
import { table } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService, type RunningService } from './service.js';

/**
 * The memory scenario: the service as `npm start` runs it (its heap flags) under requests whose
 * cost is in what they make the service hold, each case a function of its own, its peak resident
 * memory sampled through the bench's RSS watch (phase `memory: <case>`).
 */

export interface MemoryRow {
  case: string;
  requests: number;
  failed: number;
  largestReplyBytes: number;
  alive: boolean;
}

/**
 * Large replies: an account's ingest token stores 100 events of 1 MB in one user's stream; then
 * 12 concurrent reads at a time (track lookup of the last event, the lead's events and timeline at
 * limit 500), three rounds. Each reply is a page of at most 1 MiB, payloads over 4 KiB truncated.
 */
export async function largeReplyCase(service: RunningService, adminToken: string): Promise<MemoryRow> {
  const account = await createAccount(service.url, adminToken, 'Large replies');
  const post = async (endpoint: string, body: unknown): Promise<{ status: number; trackID?: string }> => {
    const response = await fetch(`${service.url}/v1/accounts/${account.licenseCode}/${endpoint}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const reply = (await response.json()) as { response?: { trackID?: string } };
    return { status: response.status, trackID: reply.response?.trackID };
  };
  setPhase('memory: large replies (planting)');
  await post('users', { userId: 'big', attributes: {} });
  const blob = 'x'.repeat(1_000_000);
  for (let i = 0; i < 100; i += 1) await post('events', { userId: 'big', eventName: 'large', eventData: { blob, i } });
  const { trackID } = await post('events', { userId: 'big', eventName: 'last', eventData: {} });
  const read = async (path: string): Promise<{ status: number; bytes: number }> => {
    const response = await fetch(`${service.url}/admin/v1/accounts/${account.licenseCode}/${path}`, { headers: { authorization: `Bearer ${account.accessToken}` } }).catch(() => null);
    return response ? { status: response.status, bytes: (await response.arrayBuffer()).byteLength } : { status: 0, bytes: 0 };
  };
  for (let i = 0; i < 1200 && (await read(`track/${trackID}`)).status !== 200; i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  setPhase('memory: large replies (reading)');
  const paths = [`track/${trackID}`, 'leads/big/events?limit=500', 'leads/big/timeline?limit=500'];
  const replies: { status: number; bytes: number }[] = [];
  for (let round = 0; round < 3; round += 1) {
    replies.push(...(await Promise.all(Array.from({ length: 12 }, (_, i) => read(paths[i % paths.length] as string)))));
  }
  const alive = (await fetch(`${service.url}/healthz`).then((r) => r.ok, () => false)) && service.child.process.exitCode === null;
  return { case: 'large replies', requests: replies.length, failed: replies.filter((r) => r.status !== 200).length, largestReplyBytes: Math.max(...replies.map((r) => r.bytes)), alive };
}

/** The memory scenario on `dataDir`: one service, each case in turn. */
export async function memoryGroup(dataDir: string, adminToken: string, children: Child[]): Promise<MemoryRow[]> {
  const service = await startService('service (memory)', dataDir, adminToken, children);
  const rows: MemoryRow[] = [];
  try {
    rows.push(await largeReplyCase(service, adminToken));
  } finally {
    await stopService(service);
  }
  return rows;
}

/** Prints the memory scenario's rows (peaks are in the memory table); true when a case failed. */
export function printMemoryCases(rows: MemoryRow[]): boolean {
  console.log('\nmemory scenario: requests that make the service hold much (peak RSS per phase in the memory table below)');
  console.log(table(['case', 'requests', 'failed', 'largest reply KiB', 'alive'], rows.map((r) => [r.case, String(r.requests), String(r.failed), (r.largestReplyBytes / 1024).toFixed(0), String(r.alive)])));
  return rows.some((r) => r.failed > 0 || !r.alive);
}
