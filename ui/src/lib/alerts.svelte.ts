// Errors the operator must see but that belong to no one view: a list that failed to load,
// the background loop stopping, a link that would not open. Shown as dismissable banners.

let next = 1;

export interface Alert {
  id: number;
  message: string;
}

export const alerts = $state<{ list: Alert[] }>({ list: [] });

export function report(message: string): void {
  // The same failure repeated (a refetch failing on every change) stays one banner.
  if (alerts.list.some((alert) => alert.message === message)) return;
  alerts.list.push({ id: next++, message });
}

export function dismiss(id: number): void {
  alerts.list = alerts.list.filter((alert) => alert.id !== id);
}
