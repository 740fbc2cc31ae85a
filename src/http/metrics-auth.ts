import { hashToken, tokenMatches } from '../accounts/token-hash.js';
import { presentedToken } from './auth.js';

/**
 * Who may read `/metrics` (on the API's port and on a worker's): anyone when METRICS_TOKEN is not
 * set; else only a request whose Authorization header holds it (`Bearer <METRICS_TOKEN>`), compared
 * in constant time. The page counts every account's traffic, route by route (README, Metrics).
 */
export class MetricsAccess {
  private readonly tokenHash: Buffer | null;

  constructor(metricsToken: string | undefined) {
    this.tokenHash = metricsToken ? hashToken(metricsToken) : null;
  }

  allows(authorization: string | undefined): boolean {
    if (!this.tokenHash) return true;
    const token = presentedToken(authorization);
    return token !== null && tokenMatches(token, this.tokenHash);
  }
}

/** The text of the 401 a request without the metrics token gets. */
export const metricsTokenRequired = 'METRICS_TOKEN is set: /metrics needs Authorization: Bearer <METRICS_TOKEN>';
