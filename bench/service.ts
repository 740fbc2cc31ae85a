import { join } from 'node:path';
import { freePort } from '../src/net.js';
import { nodeFlagsOf } from '../src/node-flags.js';
import { startChild, stopChild, waitHealthy, type Child } from './children.js';
import { root, say } from './settings.js';

/** The service under test as a child process: its environment, start, stop and accounts. */

export interface Account {
  licenseCode: string;
  accessToken: string;
}

/** The service's environment for a data directory: rate limits off (a browser key's too), logs at warn. */
export function serviceEnv(dataDir: string, port: number, adminToken: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  // As `npm start` runs it unless a scenario says otherwise (PROJECTIONS=off).
  delete env.PROJECTIONS;
  delete env.PROJECTION_POLL_MS;
  delete env.PROJECTION_BATCH_SIZE;
  delete env.SEALING;
  return Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(port),
    ADMIN_TOKEN: adminToken,
    PRODUCTSEVENTS_RATE_LIMIT: '0',
    INGEST_RATE_LIMIT: '0',
    BROWSER_ADDRESS_RATE_LIMIT: '0',
    BROWSER_KEY_RATE_LIMIT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  });
}

export interface RunningService {
  child: Child;
  url: string;
  dataDir: string;
}

/**
 * `node dist/src/main.js` on `dataDir` (its embedded PostgreSQL started or reused), healthy.
 * `projections: false` runs it with PROJECTIONS=off (the API alone); `sealing: false` with
 * SEALING=off (new events stored unsealed).
 */
export async function startService(
  name: string,
  dataDir: string,
  adminToken: string,
  children: Child[],
  { projections = true, sealing = true, port, env: extra = {} }: { projections?: boolean; sealing?: boolean; port?: number; env?: Record<string, string> } = {},
): Promise<RunningService> {
  const listenOn = port ?? (await freePort());
  const env = serviceEnv(dataDir, listenOn, adminToken, { ...(projections ? {} : { PROJECTIONS: 'off' }), ...(sealing ? {} : { SEALING: 'off' }), ...extra });
  const child = startChild(name, join(root, 'dist', 'src', 'main.js'), env, root, { nodeFlags: nodeFlagsOf('start') });
  children.push(child);
  say(`starting ${name} (embedded PostgreSQL in ${dataDir})`);
  const url = `http://127.0.0.1:${listenOn}`;
  await waitHealthy(child, `${url}/healthz`, 180_000);
  return { child, url, dataDir };
}

/** SIGTERM, and the embedded PostgreSQL stopped too should the service hang. */
export async function stopService(service: RunningService): Promise<void> {
  say(`${service.child.name} stopped (SIGTERM): ${await stopChild(service.child, 60_000, service.dataDir)}`);
}

/** The projection worker process, as `npm run worker` runs it, beside the service on its data directory. */
export function startWorker(name: string, dataDir: string, adminToken: string, children: Child[], extra: Record<string, string> = {}): Child {
  const child = startChild(name, join(root, 'dist', 'src', 'worker-main.js'), serviceEnv(dataDir, 0, adminToken, extra), root, { nodeFlags: nodeFlagsOf('worker') });
  children.push(child);
  return child;
}

export async function createAccount(serviceUrl: string, adminToken: string, name = 'Bench'): Promise<Account> {
  const response = await fetch(`${serviceUrl}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  const body = (await response.json()) as { licenseCode?: unknown; accessToken?: unknown };
  if (response.status !== 201 || typeof body.licenseCode !== 'string' || typeof body.accessToken !== 'string') {
    throw new Error(`account creation answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { licenseCode: body.licenseCode, accessToken: body.accessToken };
}

/**
 * POSTs each body to `url`, `concurrency` at a time; throws on the first reply that is not 200
 * with every item queued (the bodies fill the store before a scenario, they are not measured).
 */
export async function postAll(url: string, accessToken: string, bodies: readonly string[], concurrency: number): Promise<void> {
  let next = 0;
  const poster = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body });
      const reply = await response.text();
      if (!response.ok || !reply.includes('"status":"queued"') || reply.includes('"status":"error"')) {
        throw new Error(`POST ${url} answered ${response.status}: ${reply.slice(0, 300)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, poster));
}
