/**
 * Finding notebooks and cells, and turning cell models into nbformat-shaped JSON.
 */
import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import * as nbformat from '@jupyterlab/nbformat';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

import { RequestError } from './protocol';

const CELL_TYPES: ReadonlyArray<nbformat.CellType> = ['code', 'markdown', 'raw'];

/** A cell model together with its position in the notebook. */
export interface ILocatedCell {
  cell: ICellModel;
  index: number;
}

/** Strips what JupyterLab and the kernel may write differently: a drive prefix, "./" or "/". */
export function normalizePath(path: string): string {
  const withoutDrive = path.replace(/^[A-Za-z0-9_-]+:(?!\/\/)/, '');
  return withoutDrive.replace(/^(\.\/)+/, '').replace(/^\/+/, '');
}

/** The open notebook panel showing `path`, if any. */
export function findPanel(tracker: INotebookTracker, path: string): NotebookPanel | undefined {
  const wanted = normalizePath(path);
  return (
    tracker.find(
      panel =>
        normalizePath(panel.context.path) === wanted ||
        normalizePath(panel.context.localPath) === wanted
    ) ?? undefined
  );
}

/** The notebook model of `panel`, or an error when it has none (the panel is closing). */
export function notebookModel(panel: NotebookPanel) {
  const model = panel.content.model;
  if (!model) {
    throw new RequestError(`notebook '${panel.context.path}' has no model (is it closing?)`);
  }
  return model;
}

/** The cell whose id is `id` in `panel`, if any. */
function locateCell(panel: NotebookPanel, id: string): ILocatedCell | undefined {
  const cells = notebookModel(panel).cells;
  for (let index = 0; index < cells.length; index++) {
    const cell = cells.get(index);
    if (cell.id === id) {
      return { cell, index };
    }
  }
  return undefined;
}

/** Whether `panel` has a cell with this id. */
export function hasCell(panel: NotebookPanel, id: string): boolean {
  return locateCell(panel, id) !== undefined;
}

/** The cell whose id is `id` in `panel`, or an error naming the notebook. */
export function findCell(panel: NotebookPanel, id: string): ILocatedCell {
  const located = locateCell(panel, id);
  if (!located) {
    throw new RequestError(`no cell with id '${id}' in '${panel.context.path}'`);
  }
  return located;
}

/** Validates a requested cell type. */
export function cellType(value: unknown): nbformat.CellType {
  if (typeof value !== 'string' || !CELL_TYPES.includes(value as nbformat.CellType)) {
    throw new RequestError(`'cell_type' must be one of ${CELL_TYPES.join(', ')}`);
  }
  return value as nbformat.CellType;
}

/** The cell as the kernel sees it: id, type, source string, metadata, outputs, count. */
export function cellToJSON(cell: ICellModel): JSONObject {
  const json = cell.toJSON();
  const code = cell.type === 'code' ? (json as nbformat.ICodeCell) : undefined;
  return {
    id: cell.id,
    cell_type: cell.type,
    source: cell.sharedModel.getSource(),
    metadata: (json.metadata ?? {}) as JSONObject,
    outputs: (code?.outputs ?? []) as unknown as JSONObject[],
    execution_count: code?.execution_count ?? null
  };
}

/** The cell as a code cell, or an error when it is markdown or raw. */
export function asCodeCell(located: ILocatedCell): ICodeCellModel {
  if (located.cell.type !== 'code') {
    throw new RequestError(
      `cell '${located.cell.id}' is a ${located.cell.type} cell; only code cells have outputs`
    );
  }
  return located.cell as ICodeCellModel;
}

/** The first code cell whose shared model says it is running, if the version tracks that. */
export function runningCellId(panel: NotebookPanel): string | undefined {
  const cells = notebookModel(panel).cells;
  for (let index = 0; index < cells.length; index++) {
    const cell = cells.get(index);
    const shared = cell.sharedModel as { executionState?: string };
    if (cell.type === 'code' && shared.executionState === 'running') {
      return cell.id;
    }
  }
  return undefined;
}
