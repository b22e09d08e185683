// Links in request descriptions and sources open in the system browser, never in the app
// window: the window would navigate away from the inbox, and a page from a request has no
// business running inside it. Rust decides which links may open at all.

import { openLink } from './ipc';
import { report } from './alerts.svelte';

export function openExternal(url: string): void {
  openLink(url).catch((error: { message: string }) => report(error.message));
}

/**
 * Svelte action: any click on an `<a>` inside `node` (including ones in `{@html}` content,
 * which cannot carry their own handlers) is stopped and its href handed to `open_link`.
 * Middle clicks too, which would otherwise open a new webview window.
 */
export function externalLinks(node: HTMLElement) {
  const handle = (event: MouseEvent) => {
    const target = event.target instanceof Element ? event.target : null;
    const anchor = target?.closest('a');
    if (!anchor || !node.contains(anchor)) return;
    if (event.type === 'auxclick' && event.button !== 1) return;
    event.preventDefault();
    const href = anchor.getAttribute('href');
    if (href) openExternal(href);
  };
  node.addEventListener('click', handle);
  node.addEventListener('auxclick', handle);
  return {
    destroy() {
      node.removeEventListener('click', handle);
      node.removeEventListener('auxclick', handle);
    },
  };
}
