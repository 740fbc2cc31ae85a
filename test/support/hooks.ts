import { startTestServer, stopTestServer, testServerStarted } from './database.js';

export async function mochaGlobalSetup(): Promise<void> {
  await startTestServer();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestServer();
}

/**
 * Runners that load this file but do not run mocha's global fixtures (StrykerJS's mocha runner,
 * which runs the specs many times in one process) start the server before the first run, once.
 */
export const mochaHooks = {
  async beforeAll(): Promise<void> {
    if (!testServerStarted()) await startTestServer();
  },
};
