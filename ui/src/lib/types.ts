// Shapes shared by App and its components that are not part of the Rust contract.

import type { FormState } from './form';
import type { Via } from './words';

/**
 * The views in the header's nav: Settings in the app window, "This device" in a browser
 * (which is not served the settings).
 */
export type Tab = 'pending' | 'history' | 'problems' | 'settings' | 'device';

/** What happened to the open request elsewhere while the operator was looking at it. */
export type Notice =
  | { kind: 'settled'; id: string; status: string; answeredBy: string; via: Via }
  | { kind: 'cancelled'; id: string };

/** An unfinished answer, kept while the operator looks at other requests. */
export interface SavedDraft {
  form: FormState;
  step: number;
}
