import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { until } from './eventually.js';

/** The lines the service and the worker log once they listen, with the port they took. */
const listeningLines = new Set(['tracking ingestion service listening', 'projection worker started']);

export interface StartOptions {
  /** Flags for node before the script, such as `--max-old-space-size=128`. */
  nodeFlags?: string[];
}

/**
 * `npm start` or `npm run worker` as a child process in a process group of its own, as a terminal
 * runs it. It listens on a port of its choosing (PORT=0, and WORKER_PORT=0 when asked for), read
 * from its log (so LOG_LEVEL must keep info lines): a port picked here beforehand could be taken
 * meanwhile, by its own embedded PostgreSQL for one.
 */
export class ServiceProcess {
  readonly lines: Array<{ level: number; msg: string; [field: string]: unknown }> = [];
  private errorOutput = '';
  private port: number | null = null;
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      const complete = partial.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete) if (line.startsWith('{')) this.take(JSON.parse(line) as ServiceProcess['lines'][number]);
    });
    child.stderr?.on('data', (chunk: Buffer) => (this.errorOutput = (this.errorOutput + chunk.toString()).slice(-4_000)));
    this.exited = new Promise((done) => child.on('exit', (code) => done(code)));
  }

  private take(line: ServiceProcess['lines'][number]): void {
    this.lines.push(line);
    if (listeningLines.has(line.msg) && typeof line.port === 'number') this.port = line.port;
  }

  static start(script: 'main' | 'worker-main', env: Record<string, string>, { nodeFlags = [] }: StartOptions = {}): ServiceProcess {
    const child = spawn(process.execPath, [...nodeFlags, resolve(projectRoot, `dist/src/${script}.js`)], {
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    return new ServiceProcess(child);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('not started');
    return this.child.pid;
  }

  /** Its address, once it has logged the port it listens on (see waitForHealth). */
  get base(): string {
    if (this.port === null) throw new Error('the process has not logged a port it listens on (yet)');
    return `http://127.0.0.1:${this.port}`;
  }

  /** What it wrote to stderr last (a crash's message, such as running out of heap). */
  get stderr(): string {
    return this.errorOutput;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  logged(msg: string): boolean {
    return this.lines.some((line) => line.msg === msg);
  }

  /** Waits for a log line, failing if the process exits first or `ms` pass. */
  async waitForLine(msg: string, ms = 30_000): Promise<void> {
    await until(
      () => {
        if (this.logged(msg)) return true;
        if (!this.running) throw new Error(`exited with ${this.child.exitCode ?? this.child.signalCode} before logging '${msg}': ${this.errorOutput}`);
        return false;
      },
      ms,
      () => `'${msg}' not logged; the last lines: ${this.lines.slice(-8).map((l) => l.msg).join(' / ')}`,
    );
  }

  /** Waits until the service listens and /healthz answers 200. */
  async waitForHealth(ms = 60_000): Promise<void> {
    const started = Date.now();
    await this.waitForLine('tracking ingestion service listening', ms);
    let status = 0;
    await until(
      async () => {
        if (!this.running) throw new Error(`exited with ${this.child.exitCode ?? this.child.signalCode}: ${this.errorOutput}`);
        status = await fetch(`${this.base}/healthz`).then((r) => r.status, () => 0);
        return status >= 200 && status < 300;
      },
      Math.max(0, ms - (Date.now() - started)),
      () => `not healthy within ${ms} ms (/healthz: ${status || 'no answer'})`,
    );
  }

  /** Ends the process if a test left it running: SIGTERM, then SIGKILL if it has not exited within 10 s (stuck at its heap limit, say). */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(killer);
  }
}

export async function post(base: string, path: string, body: unknown, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
