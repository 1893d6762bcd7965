/** Small helpers shared by the settings panel's sections: goat's endpoints and DOM building. */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export interface IProblem {
  field: string;
  index?: number;
  rule?: unknown;
  server?: string;
  message: string;
}

export interface IReply<T> {
  ok: boolean;
  status: number;
  body: T;
}

/** One JSON request to goat's endpoints, authenticated like every JupyterLab request. */
export async function call<T>(path: string, method = 'GET', body?: unknown): Promise<IReply<T>> {
  const settings = ServerConnection.makeSettings();
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
  }
  const url = URLExt.join(settings.baseUrl, 'goat', path);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  return { ok: response.ok, status: response.status, body: (text ? JSON.parse(text) : {}) as T };
}

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    node.setAttribute(key, value);
  }
  node.textContent = text;
  return node;
}

export function section(title: string, ...children: HTMLElement[]): HTMLElement {
  const box = element('section', { class: 'goat-settings-section' });
  box.append(element('h3', {}, title), ...children);
  return box;
}

export function labelled(text: string, control: HTMLElement): HTMLElement {
  const label = element('label', { class: 'goat-settings-field' });
  label.append(element('span', {}, text), control);
  return label;
}
