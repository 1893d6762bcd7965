/**
 * A small marker in the gutter of cells whose output no longer matches the kernel: a cell edited
 * since it ran, and a stale cell: one that reads a variable another cell changed after it ran
 * (marimo's rule: only cells that depend on changed variables). A `%%goat` cell is a prompt: it
 * binds and reads nothing, so it is never marked and never makes another cell stale; nor does
 * running cells in another order than top to bottom by itself. The kernel side (goat's execution
 * log) tells the model its own facts; here they come from what this page saw run: the source at
 * the moment a cell got its execution count (a Shift+Enter or goat's RunCell).
 */
import { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

import { cellNames, INames } from './pynames';

const STALE_CLASS = 'goat-stale';
const CACHED_SOURCES = 500;

/** The source each cell had when it last ran, keyed by its model (only cells run in this page). */
const ranSources = new WeakMap<ICellModel, string>();
const parsed = new Map<string, INames>();

function codeModel(cell: Cell): ICodeCellModel | null {
  return cell.model.type === 'code' ? (cell.model as ICodeCellModel) : null;
}

function same(a: string, b: string): boolean {
  return a.trimEnd() === b.trimEnd();
}

function isPrompt(source: string): boolean {
  return source.trimStart().startsWith('%%goat');
}

/** A ran source's names, parsed once per distinct source. */
function namesOf(source: string): INames {
  let names = parsed.get(source);
  if (!names) {
    if (parsed.size >= CACHED_SOURCES) {
      parsed.clear();
    }
    names = cellNames(source);
    parsed.set(source, names);
  }
  return names;
}

/** A cell this page saw run: its position, the source that ran and its execution count. */
interface IRan {
  index: number;
  source: string;
  count: number;
}

function ranCell(cells: readonly Cell[], index: number): IRan | null {
  const model = codeModel(cells[index]);
  const source = model ? ranSources.get(model) : undefined;
  const count = model?.executionCount;
  return source === undefined || typeof count !== 'number' ? null : { index, source, count };
}

/** Why the cell's output may be out of date: the variables it reads that a later run changed. */
function dependsOnChanged(cells: readonly Cell[], cell: IRan): string | null {
  const reads = namesOf(cell.source).reads;
  let found: { names: string[]; by: IRan } | null = null;
  cells.forEach((_other, index) => {
    const other = index === cell.index ? null : ranCell(cells, index);
    if (!other || other.count <= cell.count || (found && found.by.count > other.count)) {
      return;
    }
    const names = [...namesOf(other.source).binds].filter(name => reads.has(name));
    if (names.length) {
      found = { names, by: other };
    }
  });
  if (!found) {
    return null;
  }
  const { names, by } = found as { names: string[]; by: IRan };
  const which = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
  return (
    `it uses ${which}, which cell ${by.index + 1} changed after this cell ran ` +
    `(as [${by.count}], after [${cell.count}])`
  );
}

/** What the marker says for one cell, or null when the cell matches what ran. */
function staleText(cells: readonly Cell[], index: number): { label: string; why: string } | null {
  const model = codeModel(cells[index]);
  const ran = ranCell(cells, index);
  if (!model || !ran || isPrompt(ran.source)) {
    return null;
  }
  if (!same(ran.source, model.sharedModel.getSource())) {
    return { label: 'edited', why: `it was edited since it ran as [${ran.count}]` };
  }
  const changed = dependsOnChanged(cells, ran);
  return changed ? { label: 'stale', why: changed } : null;
}

function showMarker(cell: Cell, text: { label: string; why: string } | null): void {
  let marker = cell.node.querySelector(`:scope > .${STALE_CLASS}`) as HTMLElement | null;
  if (text === null) {
    marker?.remove();
    return;
  }
  if (!marker) {
    marker = document.createElement('div');
    marker.className = STALE_CLASS;
    cell.node.appendChild(marker);
  }
  marker.textContent = text.label;
  marker.title = `This cell's output may not match the kernel: ${text.why}. Re-run it to bring them back in line.`;
}

/** Keeps the stale markers of every cell of `panel` up to date. */
export function markStaleCells(panel: NotebookPanel): void {
  const notebook = panel.content;
  const watched = new WeakSet<ICellModel>();
  const refresh = () => {
    const cells = notebook.widgets;
    cells.forEach((cell, index) => showMarker(cell, staleText(cells, index)));
  };
  const watch = () => {
    for (const cell of notebook.widgets) {
      const model = codeModel(cell);
      if (!model || watched.has(model)) {
        continue;
      }
      watched.add(model);
      model.stateChanged.connect((_sender, change) => {
        if (change.name === 'executionCount' && typeof change.newValue === 'number') {
          ranSources.set(model, model.sharedModel.getSource());
        }
        refresh();
      });
      model.contentChanged.connect(refresh);
    }
    refresh();
  };
  notebook.model?.cells.changed.connect(() => requestAnimationFrame(watch));
  notebook.modelChanged.connect(() => requestAnimationFrame(watch));
  void panel.context.ready.then(watch);
}
