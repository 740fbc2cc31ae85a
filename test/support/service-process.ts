import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../../src/paths.js';

/** `npm start` or `npm run worker` as a child process in a process group of its own, as a terminal runs it. */
export class ServiceProcess {
  readonly lines: Array<{ level: number; msg: string; [field: string]: unknown }> = [];
  private output = '';
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess, readonly base: string) {
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      const complete = partial.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete) if (line.startsWith('{')) this.lines.push(JSON.parse(line) as ServiceProcess['lines'][number]);
    });
    child.stderr?.on('data', (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-4_000)));
    this.exited = new Promise((done) => child.on('exit', (code) => done(code)));
  }

  static start(script: 'main' | 'worker-main', env: Record<string, string>): ServiceProcess {
    const child = spawn(process.execPath, [resolve(projectRoot, `dist/src/${script}.js`)], {
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    return new ServiceProcess(child, `http://127.0.0.1:${env.PORT ?? ''}`);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('not started');
    return this.child.pid;
  }

  logged(msg: string): boolean {
    return this.lines.some((line) => line.msg === msg);
  }

  /** Waits for a log line, failing if the process exits first or `ms` pass. */
  async waitForLine(msg: string, ms = 30_000): Promise<void> {
    for (const until = Date.now() + ms; !this.logged(msg); await sleep(20)) {
      if (this.child.exitCode !== null) throw new Error(`exited with ${this.child.exitCode} before logging '${msg}': ${this.output}`);
      if (Date.now() > until) throw new Error(`'${msg}' not logged within ${ms} ms; the last lines: ${this.lines.slice(-8).map((l) => l.msg).join(' / ')}`);
    }
  }

  async waitForHealth(ms = 60_000): Promise<void> {
    for (const until = Date.now() + ms; ; await sleep(50)) {
      if (this.child.exitCode !== null) throw new Error(`exited with ${this.child.exitCode}: ${this.output}`);
      if (await fetch(`${this.base}/healthz`).then((r) => r.ok, () => false)) return;
      if (Date.now() > until) throw new Error(`not healthy within ${ms} ms`);
    }
  }

  /** Ends the process if a test left it running. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      await this.exited;
    }
  }
}

/** A loopback port free right now. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => done(port));
    });
  });
}

export async function post(base: string, path: string, body: unknown, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
