/**
 * Which bulk replies were replays: the service answers a repeat of a request it has answered
 * before (same Idempotency-Key and body) with the reply it recorded, marked `Idempotent-Replayed:
 * true`, and stores nothing new (docs/decisions.md, Idempotency). The SDK's results do not carry
 * reply headers, so the importer hands the client a fetch that notes them per key.
 */
export interface ReplayWatch {
  /** The fetch to give the SDK client: the given one, noting each reply's key and marking. */
  fetch: typeof fetch;
  /**
   * Whether the last reply under `key` replayed what an earlier import stored, asked once a request
   * is done (its key is then forgotten). Not when an earlier attempt of this run under the key may
   * have stored the items itself (no reply, a 2xx or 5xx): the replay is then of this run's own
   * request, whose items count as new.
   */
  take(key: string): boolean;
}

export function watchReplays(base: typeof fetch): ReplayWatch {
  const keys = new Map<string, { ownAttempt: boolean; replayed: boolean }>();
  const watched: typeof fetch = async (input, init) => {
    const key = new Headers(init?.headers).get('idempotency-key');
    const state = key === null ? null : (keys.get(key) ?? { ownAttempt: false, replayed: false });
    if (key !== null && state) keys.set(key, state);
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      if (state) state.ownAttempt = true;
      throw error;
    }
    if (state) {
      state.replayed = !state.ownAttempt && response.status === 200 && response.headers.get('idempotent-replayed') === 'true';
      // Only a 4xx (a conflict, a rate limit, a refusal) is sure to have stored nothing.
      if (response.status < 400 || response.status >= 500) state.ownAttempt = true;
    }
    return response;
  };
  const take = (key: string): boolean => {
    const replayed = keys.get(key)?.replayed ?? false;
    keys.delete(key);
    return replayed;
  };
  return { fetch: watched, take };
}
