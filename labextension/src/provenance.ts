/**
 * Provenance you can follow: the badge of a cell goat wrote says which model and `%%goat` prompt
 * made it and whether the user edited it since (the stamp's `source_hash` is SHA-256 of the UTF-8
 * source, first 16 hex digits, as goat_jupyter/tools/notebook/notebook_provenance.py computes it); a click
 * on the badge scrolls to that `%%goat` cell, a click on a footer link (`a[data-goat-cell]` or
 * `href="#goat-cell=ID"`, which survives the sanitizer of untrusted outputs) scrolls to the cell.
 */
import { Cell } from '@jupyterlab/cells';
import { Notebook } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

const HASH_DIGITS = 16;
const HIGHLIGHT_MS = 3000;
const LINK_PREFIX = '#goat-cell=';
export const EDITED = 'edited by you since';

/** SHA-256 of the UTF-8 source, in the stamp's 16 hex digits; null where Web Crypto is missing
 * (a page not served over https or from localhost). */
export async function sourceHash(source: string): Promise<string | null> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    return null;
  }
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(source));
  const hex = Array.from(new Uint8Array(digest), byte => byte.toString(16).padStart(2, '0'));
  return hex.join('').slice(0, HASH_DIGITS);
}

function text(stamp: JSONObject, key: string): string | undefined {
  const value = stamp[key];
  return typeof value === 'string' && value ? value : undefined;
}

/** Whether the source differs from what goat wrote (false when unknown: an old stamp). */
export async function editedSince(stamp: JSONObject, source: string): Promise<boolean> {
  const wrote = text(stamp, 'source_hash');
  const now = wrote === undefined ? null : await sourceHash(source);
  return wrote !== undefined && now !== null && now !== wrote;
}

/** The badge's tooltip: model, prompt, turn, session, and whether the user changed the cell. */
export function stampText(stamp: JSONObject, edited: boolean): string {
  const parts = ['Written by goat'];
  const model = text(stamp, 'model');
  const prompt = text(stamp, 'prompt');
  if (model) {
    parts.push(`model ${model}`);
  }
  if (prompt) {
    parts.push(`prompt “${prompt}”`);
  }
  if (typeof stamp['turn'] === 'number') {
    parts.push(`turn ${stamp['turn']}`);
  }
  if (edited) {
    parts.push(EDITED);
  }
  const lines = [parts.join(' · ')];
  if (text(stamp, 'cell')) {
    lines.push('Click to show the %%goat cell it came from.');
  }
  return lines.join('\n');
}

/** Scrolls to the cell with model id `cellId` and highlights it; false when it is not here. */
export function showCell(notebook: Notebook, cellId: string): boolean {
  const index = notebook.widgets.findIndex(cell => cell.model.id === cellId);
  const widget = notebook.widgets[index];
  if (!widget) {
    return false;
  }
  notebook.activeCellIndex = index;
  void notebook.scrollToCell(widget, 'center');
  widget.addClass('goat-highlight');
  setTimeout(() => widget.removeClass('goat-highlight'), HIGHLIGHT_MS);
  return true;
}

/** The origin `%%goat` cell of a stamp (undefined when the stamp does not name one). */
export function originCell(stamp: JSONObject): string | undefined {
  return text(stamp, 'cell');
}

function linkTarget(anchor: HTMLAnchorElement): string | undefined {
  const data = anchor.dataset.goatCell;
  const href = anchor.getAttribute('href') ?? '';
  const fromHref = href.startsWith(LINK_PREFIX) ? decodeURIComponent(href.slice(LINK_PREFIX.length)) : '';
  return data || fromHref || undefined;
}

/** Footer links in this notebook's outputs scroll to their cell instead of following the href. */
export function followCellLinks(notebook: Notebook): void {
  const onClick = (event: MouseEvent) => {
    const target = event.target as Element | null;
    const anchor = target?.closest?.('a[data-goat-cell], a[href^="#goat-cell="]') as HTMLAnchorElement | null;
    const cellId = anchor ? linkTarget(anchor) : undefined;
    if (cellId === undefined) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    showCell(notebook, cellId);
  };
  notebook.node.addEventListener('click', onClick, true);
  notebook.disposed.connect(() => notebook.node.removeEventListener('click', onClick, true));
}

/** Badge clicks show the origin cell. */
export function onBadgeClick(badge: HTMLElement, notebook: Notebook, cell: Cell): void {
  badge.addEventListener('click', event => {
    const stamp = cell.model.getMetadata('goat') as JSONObject | undefined;
    const origin = stamp && typeof stamp === 'object' ? originCell(stamp) : undefined;
    if (origin !== undefined) {
      event.preventDefault();
      event.stopPropagation();
      showCell(notebook, origin);
    }
  });
}
