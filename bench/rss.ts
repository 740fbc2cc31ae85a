import { readFile } from 'node:fs/promises';

/**
 * Resident memory of the bench's child processes, sampled every 200 ms for as long as each runs
 * (Linux: /proc/<pid>/status), with the bench phase running when each one's highest sample was
 * taken. Elsewhere the samples are missing and the report says so.
 */

const sampleMs = 200;
let phase = 'start-up';

/** Names what runs now; each child's highest sample is attributed to it. */
export function setPhase(name: string): void {
  phase = name;
}

export interface RssPeak {
  /** Highest resident set size seen, bytes; null when none could be read. */
  maxBytes: number | null;
  /** The phase when it was seen. */
  during: string;
  samples: number;
}

async function rssBytes(pid: number): Promise<number | null> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(text)?.[1];
  return kib === undefined ? null : Number(kib) * 1024;
}

/** Samples `pid` until `exited` settles; the returned peak is updated in place. */
export function watchRss(pid: number, exited: Promise<unknown>): RssPeak {
  const peak: RssPeak = { maxBytes: null, during: '-', samples: 0 };
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    void rssBytes(pid).then((bytes) => {
      reading = false;
      if (bytes === null) return;
      peak.samples += 1;
      if (peak.maxBytes === null || bytes > peak.maxBytes) {
        peak.maxBytes = bytes;
        peak.during = phase;
      }
    });
  }, sampleMs);
  timer.unref();
  void exited.then(() => clearInterval(timer));
  return peak;
}
