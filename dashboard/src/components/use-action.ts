import { useState } from 'preact/hooks';

/**
 * A button's or form's action: `busy` while it runs (controls disable themselves), its failure in
 * `error` (shown as text), cleared when the next one starts. `setError` lets a page put its own
 * load failures in the same place.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (action: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
