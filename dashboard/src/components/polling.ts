import { useEffect, useRef, useState } from 'preact/hooks';

/** Whether the tab is shown: polling stops while it is hidden. */
export function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => !document.hidden);
  useEffect(() => {
    const update = () => setVisible(!document.hidden);
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/**
 * Calls `task` at once and then `everyMs` after each call ended, while `active` and the tab is
 * shown; stops when the page is left. A change of `key` starts over at once. The latest `task` is
 * called (no stale closure); it is given `wanted()`, false once the polling it belongs to stopped,
 * so that a reply arriving after a pause is dropped.
 */
export function usePolling(task: (wanted: () => boolean) => Promise<void>, everyMs: number, active: boolean, key: unknown = null): void {
  const visible = usePageVisible();
  const latest = useRef(task);
  latest.current = task;
  useEffect(() => {
    if (!active || !visible) return;
    let stopped = false;
    let timer: number | undefined;
    const run = async () => {
      await latest.current(() => !stopped);
      if (!stopped) timer = window.setTimeout(run, everyMs);
    };
    void run();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [active, visible, everyMs, key]);
}
