/**
 * Calls `onWake` when the page regains the network (`online`) or becomes visible again: moments when
 * waiting out the rest of a long backoff delay would only keep the user offline. Returns a function
 * that detaches the listeners. Outside a browser (Node tests, workers without `document`) it does nothing.
 */
export function watchWakeSignals(onWake: () => void): () => void {
  if (typeof window === 'undefined' || typeof document === 'undefined') return () => {};
  const win = window;
  const doc = document;
  const onVisibility = () => {
    if (doc.visibilityState === 'visible') onWake();
  };
  win.addEventListener('online', onWake);
  doc.addEventListener('visibilitychange', onVisibility);
  return () => {
    win.removeEventListener('online', onWake);
    doc.removeEventListener('visibilitychange', onVisibility);
  };
}
