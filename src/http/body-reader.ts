import type { Request, Response } from 'express';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import { AppError } from '../errors.js';
import { busy, type BodyReservation } from './body-budget.js';

/** `1mb`, `64kb`: a limit as the 413 reply names it. */
export const limitText = (bytes: number): string => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)}mb` : `${bytes / 1024}kb`);

/**
 * A body must bring at least its minimum rate (config.ts, MIN_BODY_RATE) times this many seconds
 * in each such window from its start: a client that trickles a body, or stops sending it, ties a
 * connection and what the body holds of the budget for nothing.
 */
export const slowBodyWindowSeconds = 5;

export interface ReadOptions {
  /** Bytes the body may have, after decompression. */
  limit: number;
  /** Content-Encoding, lowercased: identity, gzip, deflate or br. */
  encoding: string;
  /** Grown by each chunk as it arrives; none for the routes outside the body budget. */
  reservation?: BodyReservation;
  /** The minimum data rate, bytes per second; 0: none. */
  minBytesPerSecond: number;
}

interface Reading {
  minBytesPerSecond: number;
  received: number;
  windowStartedAt: number;
  receivedAtWindowStart: number;
  tooSlow: () => void;
}

/** The bodies being read, checked against the minimum data rate once a second by one timer. */
const readings = new Set<Reading>();
let rateTimer: NodeJS.Timeout | null = null;

function watchRate(reading: Reading): () => void {
  if (reading.minBytesPerSecond <= 0) return () => {};
  readings.add(reading);
  rateTimer ??= setInterval(() => {
    const now = Date.now();
    for (const each of readings) {
      if (now - each.windowStartedAt < slowBodyWindowSeconds * 1000) continue;
      if (each.received - each.receivedAtWindowStart < each.minBytesPerSecond * slowBodyWindowSeconds) each.tooSlow();
      each.windowStartedAt = now;
      each.receivedAtWindowStart = each.received;
    }
  }, 1000).unref();
  return () => {
    readings.delete(reading);
    if (readings.size === 0 && rateTimer) {
      clearInterval(rateTimer);
      rateTimer = null;
    }
  };
}

function decompressor(encoding: string): Transform | null {
  if (encoding === 'gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return null;
}

/**
 * Reads a request's body into one buffer, inflating it as it arrives when it is compressed. It
 * stops at the first of: more than `limit` bytes (413, naming the limit), a reservation the budget
 * refuses (503), a body slower than the minimum data rate (408), corrupt compressed data (400). A
 * body left unread ends its connection after the reply.
 */
export function readBody(req: Request, res: Response, options: ReadOptions): Promise<Buffer> {
  const { limit, encoding, reservation, minBytesPerSecond } = options;
  const inflater = decompressor(encoding);
  const inflated = encoding === 'identity' ? '' : ' once decompressed';
  const tooLarge = () => new AppError(413, `body is larger than ${limitText(limit)}${inflated}`, 'request', 'too_large');
  const declared = Number(req.get('content-length'));
  if (!inflater && Number.isSafeInteger(declared) && declared > limit) {
    res.set('Connection', 'close');
    return Promise.reject(tooLarge());
  }
  const aborted = () => new AppError(400, 'the request was aborted before its body arrived', 'request', 'aborted');
  // Aborted while it was authenticated: no event will come.
  if (req.destroyed && !req.complete) return Promise.reject(aborted());
  const source: Readable = inflater ? req.pipe(inflater) : req;

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let inflated = 0;
    // The minimum data rate counts what the client sends, not what it inflates to.
    const reading: Reading = { minBytesPerSecond, received: 0, windowStartedAt: Date.now(), receivedAtWindowStart: 0, tooSlow: () => {} };
    let done = false;
    const stopWatching = watchRate(reading);

    const cleanUp = () => {
      done = true;
      stopWatching();
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      req.off('data', onWireData);
      req.off('close', onClose);
    };
    const fail = (error: Error) => {
      if (done) return;
      cleanUp();
      // An inflater left running would go on inflating what it already holds, however much.
      if (inflater) {
        req.unpipe(inflater);
        inflater.destroy();
      }
      if (!req.complete) {
        // What the client still sends is not read: the connection ends with the reply.
        res.set('Connection', 'close');
        req.pause();
      }
      reject(error);
    };
    const onWireData = (chunk: Buffer) => {
      reading.received += chunk.length;
    };
    const onData = (chunk: Buffer) => {
      if (done) return;
      inflated += chunk.length;
      if (inflated > limit) return fail(tooLarge());
      if (reservation && !reservation.grow(chunk.length)) return fail(busy());
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (done) return;
      cleanUp();
      resolve(Buffer.concat(chunks, inflated));
    };
    const onError = (error: Error) => {
      if (inflater) return fail(new AppError(400, `body is not valid ${encoding} data (Content-Encoding: ${encoding}): ${error.message}`, 'request', 'corrupt_compression'));
      fail(aborted());
    };
    const onClose = () => {
      if (!req.complete) fail(aborted());
    };
    reading.tooSlow = () =>
      fail(new AppError(408, `the body arrived slower than ${minBytesPerSecond} bytes per second over ${slowBodyWindowSeconds} s: nothing was stored`, 'request', 'too_slow'));

    // Listened to first, so that the wire's bytes are counted before they are inflated.
    req.on('data', onWireData);
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    req.on('close', onClose);
  });
}
