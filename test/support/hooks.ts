import { startTestServer, stopTestServer } from './database.js';

export async function mochaGlobalSetup(): Promise<void> {
  await startTestServer();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestServer();
}
