/**
 * Reviewing goat's edits where they land. With `review_edits` on, the kernel marks NotebookEdit's
 * requests `review: true`; the cell then carries `metadata.goat_review` until the user decides:
 * `edited` keeps the cell's before-image (source, type, outputs, count, metadata), `created` marks
 * a new cell, and a deleted cell becomes a raw placeholder holding the before-image. Keep drops the
 * mark (or the placeholder); Undo puts the before-image back in place, removes a created cell, or
 * brings a deleted one back, and refuses when the user changed the source goat wrote (the stamp's
 * `source_hash`). The state lives in the notebook, so it survives a save, a reopen and a reload.
 */
import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import * as nbformat from '@jupyterlab/nbformat';
import { NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

import { sourceHash } from './provenance';
import { cellNames } from './pynames';

export const REVIEW_KEY = 'goat_review';

export type ReviewKind = 'edited' | 'created' | 'deleted';

/** What `metadata.goat_review` holds. */
export interface IReview {
  kind: ReviewKind;
  origin: string | null; // the %%goat cell whose run made the change
  before?: nbformat.ICell; // edited and deleted: the cell as it was before goat's first change
}

/** One decision, as the %%goat cell shows it and the kernel tells the model. */
export interface IDecision {
  action: 'kept' | 'undid' | 'refused';
  kind: ReviewKind;
  cell: number; // 1-based, from the top, as goat's transcript counts
  cell_id: string;
  origin: string | null;
  text: string;
  ran: string[] | null; // undone code that ran: the names it bound (the kernel still holds them)
}

/** The review mark of a cell, or null when it has none (or a malformed one). */
export function reviewOf(cell: ICellModel): IReview | null {
  const value = cell.getMetadata(REVIEW_KEY) as JSONObject | undefined;
  const kind = value?.['kind'];
  if (!value || (kind !== 'edited' && kind !== 'created' && kind !== 'deleted')) {
    return null;
  }
  const origin = typeof value['origin'] === 'string' ? value['origin'] : null;
  const before = value['before'];
  const image = before && typeof before === 'object' && !Array.isArray(before) ? (before as unknown as nbformat.ICell) : undefined;
  if (kind !== 'created' && !image) {
    return null;
  }
  return { kind, origin, ...(image ? { before: image } : {}) };
}

/** A cell's full nbformat JSON without its review mark: what Undo puts back. */
export function beforeImage(cell: ICellModel): nbformat.ICell {
  const json = cell.toJSON() as nbformat.ICell;
  const metadata = { ...(json.metadata as JSONObject) };
  delete metadata[REVIEW_KEY];
  return { ...json, id: cell.id, metadata } as nbformat.ICell;
}

/** The mark a replace leaves: a cell already pending keeps its first before-image. */
export function editedMark(cell: ICellModel, origin: string | null): IReview {
  return reviewOf(cell) ?? { kind: 'edited', origin, before: beforeImage(cell) };
}

/** The placeholder a reviewed delete leaves in place of `cell`, or null for a cell goat created. */
export function placeholderFor(cell: ICellModel, origin: string | null): nbformat.IRawCell | null {
  const pending = reviewOf(cell);
  if (pending?.kind === 'created') {
    return null;
  }
  const review: IReview = { kind: 'deleted', origin: pending?.origin ?? origin, before: pending?.before ?? beforeImage(cell) };
  return { cell_type: 'raw', source: '', metadata: { [REVIEW_KEY]: review as unknown as JSONObject } };
}

export function isPlaceholder(cell: ICellModel): boolean {
  return reviewOf(cell)?.kind === 'deleted';
}

function cells(panel: NotebookPanel) {
  const model = panel.content.model;
  if (!model) {
    throw new Error('the notebook has no model');
  }
  return model;
}

/** Whether the source is still what goat wrote (false when it cannot tell: no stamp, no hash). */
async function stillGoats(cell: ICellModel): Promise<boolean> {
  const stamp = cell.getMetadata('goat') as JSONObject | undefined;
  const wrote = stamp?.['source_hash'];
  const now = await sourceHash(cell.sharedModel.getSource());
  return typeof wrote === 'string' && now !== null && now === wrote;
}

/** The names a code cell bound when it ran since goat's change (null: it did not run). */
function ranNames(cell: ICellModel): string[] | null {
  if (cell.type !== 'code' || typeof (cell as ICodeCellModel).executionCount !== 'number') {
    return null;
  }
  return [...cellNames(cell.sharedModel.getSource()).binds].sort();
}

function what(kind: ReviewKind, number: number): string {
  if (kind === 'created') {
    return `the new cell ${number}`;
  }
  return kind === 'deleted' ? `the deletion of cell ${number}` : `goat's edit of cell ${number}`;
}

function decision(action: IDecision['action'], review: IReview, index: number, id: string, text: string, ran: string[] | null = null): IDecision {
  return { action, kind: review.kind, cell: index + 1, cell_id: id, origin: review.origin, text, ran };
}

/** Keep: the change stays; the mark (or a deletion's placeholder) goes. */
export function keep(panel: NotebookPanel, index: number): IDecision | null {
  const model = cells(panel);
  const cell = model.cells.get(index);
  const review = cell ? reviewOf(cell) : null;
  if (!cell || !review) {
    return null;
  }
  const id = review.kind === 'deleted' ? String(review.before?.id ?? cell.id) : cell.id;
  if (review.kind === 'deleted') {
    model.sharedModel.deleteCell(index);
  } else {
    cell.deleteMetadata(REVIEW_KEY);
  }
  return decision('kept', review, index, id, `kept ${what(review.kind, index + 1)}`);
}

/** Undo: the cell as it was before goat changed it; refused when the user edited goat's text. */
export async function undo(panel: NotebookPanel, index: number): Promise<IDecision | null> {
  const model = cells(panel);
  const cell = model.cells.get(index);
  const review = cell ? reviewOf(cell) : null;
  if (!cell || !review) {
    return null;
  }
  if (review.kind !== 'deleted' && !(await stillGoats(cell))) {
    const text =
      `Not undone: cell ${index + 1} was edited after goat ${review.kind === 'created' ? 'created' : 'changed'} it, ` +
      'and Undo would overwrite your text. Your text stays; Keep the cell, or change it back by hand.';
    return decision('refused', review, index, cell.id, text);
  }
  const ran = review.kind === 'deleted' ? null : ranNames(cell);
  const id = cell.id;
  const shared = model.sharedModel;
  shared.transact(() => {
    shared.deleteCell(index);
    if (review.before) {
      shared.insertCell(index, restorable(panel, review.before));
    }
  });
  return decision('undid', review, index, review.before ? String(review.before.id ?? id) : id, `undid ${what(review.kind, index + 1)}`, ran);
}

/** The before-image, without an id another cell took meanwhile. */
function restorable(panel: NotebookPanel, before: nbformat.ICell): nbformat.ICell {
  const taken = [...cells(panel).cells].some(other => other.id === before.id);
  if (!taken) {
    return before;
  }
  const copy = { ...before };
  delete (copy as { id?: string }).id;
  return copy;
}

/** Indexes of the pending cells of `panel`, top to bottom; with `origin`, of that %%goat run only. */
export function pendingIndexes(panel: NotebookPanel, origin?: string | null): number[] {
  const found: number[] = [];
  const list = panel.content.model?.cells;
  for (let index = 0; list && index < list.length; index++) {
    const review = reviewOf(list.get(index));
    if (review && (origin === undefined || review.origin === origin)) {
      found.push(index);
    }
  }
  return found;
}

/** What the kernel-state note says after undoing code that ran. */
export function ranNote(found: IDecision): string | null {
  if (found.action !== 'undid' || found.ran === null) {
    return null;
  }
  const names = found.ran.length ? found.ran.map(name => `\`${name}\``).join(', ') : 'no names';
  const place = found.kind === 'created' ? 'The removed cell' : `Cell ${found.cell}`;
  return (
    `${place} had run goat's code: its outputs came from the undone code, and the kernel still holds ` +
    `what it bound (${names}).` + (found.kind === 'edited' ? ' Re-run the cell to bind them from the restored code.' : '')
  );
}

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

const MAX_DIFF_CELLS = 250_000; // lines × lines: past this, the whole old source is shown as removed

/** A line diff (longest common subsequence): removed lines `-`, added `+`, the rest ` `. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length * b.length > MAX_DIFF_CELLS) {
    return [...a.map(text => ({ op: '-' as const, text })), ...b.map(text => ({ op: '+' as const, text }))];
  }
  const common: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ op: ' ', text: a[i++] });
      j++;
    } else if (i < a.length && (j >= b.length || common[i + 1][j] >= common[i][j + 1])) {
      lines.push({ op: '-', text: a[i++] }); // removed before added, as a unified diff shows them
    } else {
      lines.push({ op: '+', text: b[j++] });
    }
  }
  return lines;
}

export function sourceOf(cell: nbformat.ICell): string {
  const source = cell.source;
  return Array.isArray(source) ? source.join('') : String(source ?? '');
}

/** JSON with sorted keys: the same metadata from the kernel and from the model compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonical).join(',')}]`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The placeholder of a deleted cell that `cell` puts back (a revert re-inserts it), if any. */
export function placeholderOf(panel: NotebookPanel, cell: nbformat.IBaseCell): number | null {
  const list = cells(panel).cells;
  for (let index = 0; index < list.length; index++) {
    const before = reviewOf(list.get(index))?.before;
    if (
      isPlaceholder(list.get(index)) &&
      before &&
      before.cell_type === cell.cell_type &&
      sourceOf(before) === sourceOf(cell as nbformat.ICell) &&
      canonical(before.metadata) === canonical(cell.metadata)
    ) {
      return index;
    }
  }
  return null;
}
