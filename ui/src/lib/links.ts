// Links in request descriptions and sources never open in the inbox's own page: in the app
// window they go to the system browser (the window would navigate away from the inbox, and
// a page from a request has no business running inside it; Rust decides which links may
// open at all). In a browser they are ordinary links to a new tab, `target="_blank"` with
// `rel="noopener noreferrer"` (the new page gets no handle on this one and no Referer),
// and, as in the window, only http and https links open.

import { openLink, surface } from './ipc';
import { report } from './alerts.svelte';

export function openExternal(url: string): void {
  openLink(url).catch((error: { message: string }) => report(error.message));
}

/** Whether a link may leave the page: an absolute http(s) URL, nothing else. */
export function isWebLink(href: string): boolean {
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Makes an `<a>` open in a new tab with no opener and no referrer. */
export function asNewTabLink(anchor: Element): void {
  anchor.setAttribute('target', '_blank');
  anchor.setAttribute('rel', 'noopener noreferrer');
}

/**
 * Svelte action, for any `<a>` inside `node` (including ones in `{@html}` content, which
 * cannot carry their own handlers). In the window a click is stopped and the href handed to
 * `open_link`; middle clicks too, which would otherwise open a new webview window. In a
 * browser each link becomes a new-tab link, marked when clicked (the content can change
 * after the action starts) and at once for those already there; other schemes are stopped.
 */
export function externalLinks(node: HTMLElement) {
  const web = surface === 'web';
  const handle = (event: MouseEvent) => {
    const target = event.target instanceof Element ? event.target : null;
    const anchor = target?.closest('a');
    if (!anchor || !node.contains(anchor)) return;
    if (event.type === 'auxclick' && event.button !== 1) return;
    const href = anchor.getAttribute('href');
    if (web) {
      // Marked before the browser follows it: the default action runs after this listener.
      if (href && isWebLink(href)) asNewTabLink(anchor);
      else event.preventDefault();
      return;
    }
    event.preventDefault();
    if (href) openExternal(href);
  };
  if (web) {
    const anchors = node instanceof HTMLAnchorElement ? [node] : [...node.querySelectorAll('a')];
    for (const anchor of anchors) {
      if (isWebLink(anchor.getAttribute('href') ?? '')) asNewTabLink(anchor);
    }
  }
  node.addEventListener('click', handle);
  node.addEventListener('auxclick', handle);
  return {
    destroy() {
      node.removeEventListener('click', handle);
      node.removeEventListener('auxclick', handle);
    },
  };
}
