import { hostname } from 'node:os';

/** How status, logs and database sessions name this process's worker: `pid@host`. */
export const workerName = `${process.pid}@${hostname()}`;
