/**
 * The operations the kernel can ask for. Every change goes through the notebook's shared
 * model, so the user sees it at once and the document becomes dirty (no reload, no
 * "file changed on disk" dialog). A cell is named by `cell_id` in requests and results:
 * `id` is always the request's id, echoed in its reply.
 */
import { PageConfig } from '@jupyterlab/coreutils';
import * as nbformat from '@jupyterlab/nbformat';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

import {
  asCodeCell,
  cellToJSON,
  cellType,
  findCell,
  findPanel,
  hasCell,
  ILocatedCell,
  notebookModel,
  runningCellId
} from './cells';
import {
  optionalObject,
  optionalString,
  Request,
  RequestError,
  requiredString,
  sourceArgument
} from './protocol';
import { releaseMarked, revealMarked } from './approval_mark';
import { replaceTagged } from './goat_outputs';
import { editedMark, isPlaceholder, placeholderFor, placeholderOf, REVIEW_KEY } from './review';
import { runFinished, runStarted } from './run_cell';
import { VERSION } from './version';

/** What an operation may use besides its request. */
export interface IOpContext {
  tracker: INotebookTracker;
  /** The notebook panel whose kernel connection received the request. */
  owner: NotebookPanel;
  /** The application's name ("JupyterLab", "Jupyter Notebook"). */
  appName: string;
  /** The id of the cell run by the execute_request that sent the request, when known. */
  requestingCellId: string | undefined;
  /** The msg_id of that execute_request (the running %%goat cell). */
  requestMsgId?: string;
}

type Operation = (request: Request, context: IOpContext) => JSONObject | Promise<JSONObject>;

/** The panel a request targets: `path` if given, else the panel owning the connection. */
function targetPanel(request: Request, context: IOpContext): NotebookPanel {
  const path = optionalString(request, 'path');
  if (path === undefined) {
    if (context.owner.isDisposed) {
      throw new RequestError('the notebook that ran this cell is no longer open');
    }
    return context.owner;
  }
  const panel = findPanel(context.tracker, path);
  if (!panel) {
    throw new RequestError(`notebook '${path}' is not open in this ${context.appName}`);
  }
  return panel;
}

function hello(_request: Request, context: IOpContext): JSONObject {
  return {
    path: context.owner.context.path,
    server_root: PageConfig.getOption('serverRoot') || null,
    client: 'jupyterlab',
    app: context.appName,
    version: VERSION
  };
}

function listCells(request: Request, context: IOpContext): JSONObject {
  const panel = targetPanel(request, context);
  const cells = notebookModel(panel).cells;
  const result: JSONObject[] = [];
  for (let index = 0; index < cells.length; index++) {
    const cell = cells.get(index);
    if (!isPlaceholder(cell)) {
      result.push(cellToJSON(cell)); // a deletion awaiting review is gone, for the agent
    }
  }
  return { path: panel.context.path, dirty: panel.context.model.dirty, cells: result };
}

function insertCell(request: Request, context: IOpContext): JSONObject {
  const panel = targetPanel(request, context);
  const afterId = optionalString(request, 'after_id');
  const index = afterId === undefined ? 0 : findCell(panel, afterId).index + 1;
  // An explicit id lets the kernel put back a deleted cell under its old id (revert).
  const wantedId = optionalString(request, 'cell_id');
  if (wantedId !== undefined && hasCell(panel, wantedId)) {
    throw new RequestError(`a cell with id '${wantedId}' already exists in '${panel.context.path}'`);
  }
  const cell: nbformat.IBaseCell = {
    ...(wantedId === undefined ? {} : { id: wantedId }),
    cell_type: cellType(request['cell_type']),
    source: sourceArgument(request),
    metadata: withReview(request, optionalObject(request, 'metadata') ?? {}, () => ({
      kind: 'created',
      origin: origin(context)
    })) as nbformat.IBaseCellMetadata
  };
  const shared = notebookModel(panel).sharedModel;
  const inserted = shared.insertCell(index, cell);
  // A revert re-inserting a deleted cell leaves its placeholder nothing to decide.
  const placeholder = reviewed(request) ? null : placeholderOf(panel, cell);
  if (placeholder !== null) {
    shared.deleteCell(placeholder);
  }
  return { cell_id: inserted.id, index: placeholder !== null && placeholder < index ? index - 1 : index };
}

/** Swaps the cell for a new one of `newType` at the same place, keeping its id. */
function retypeCell(
  panel: NotebookPanel,
  located: ILocatedCell,
  newType: nbformat.CellType,
  source: string,
  metadata: JSONObject | undefined
): void {
  const replacement: nbformat.IBaseCell = {
    id: located.cell.id,
    cell_type: newType,
    source,
    metadata: (metadata ?? located.cell.sharedModel.getMetadata()) as nbformat.IBaseCellMetadata
  };
  const sharedNotebook = notebookModel(panel).sharedModel;
  sharedNotebook.transact(() => {
    sharedNotebook.deleteCell(located.index);
    sharedNotebook.insertCell(located.index, replacement);
  });
}

function replaceCell(request: Request, context: IOpContext): JSONObject {
  const panel = targetPanel(request, context);
  const cellId = requiredString(request, 'cell_id');
  const located = findCell(panel, cellId);
  const source = sourceArgument(request);
  const given = optionalObject(request, 'metadata');
  const metadata = reviewed(request)
    ? withReview(request, given ?? (located.cell.sharedModel.getMetadata() as JSONObject), () =>
        editedMark(located.cell, origin(context))
      )
    : given;
  const rawType = request['cell_type'];
  const newType = rawType === undefined || rawType === null ? undefined : cellType(rawType);
  if (newType !== undefined && newType !== located.cell.type) {
    retypeCell(panel, located, newType, source, metadata);
    return { cell_id: cellId };
  }
  notebookModel(panel).sharedModel.transact(() => {
    located.cell.sharedModel.setSource(source);
    if (metadata !== undefined) {
      // setMetadata(object) only adds keys: drop the ones the new metadata lacks (revert).
      const shared = located.cell.sharedModel;
      for (const key of Object.keys(shared.getMetadata())) {
        if (!(key in metadata)) {
          shared.deleteMetadata(key);
        }
      }
      shared.setMetadata(metadata as nbformat.IBaseCellMetadata);
    }
    if (request['clear_outputs'] === true && located.cell.type === 'code') {
      const shared = asCodeCell(located).sharedModel;
      shared.setOutputs([]);
      shared.execution_count = null;
    }
  });
  return { cell_id: cellId };
}

function deleteCell(request: Request, context: IOpContext): JSONObject {
  const panel = targetPanel(request, context);
  const located = findCell(panel, requiredString(request, 'cell_id'));
  const shared = notebookModel(panel).sharedModel;
  const placeholder = reviewed(request) ? placeholderFor(located.cell, origin(context)) : null;
  shared.transact(() => {
    shared.deleteCell(located.index);
    if (placeholder) {
      shared.insertCell(located.index, placeholder); // kept until the user keeps or undoes the deletion
    }
  });
  return {};
}

/** Whether the kernel asked for this edit to wait for the user's Keep / Undo (review.ts). */
function reviewed(request: Request): boolean {
  return request['review'] === true;
}

/** The %%goat cell whose run sends the request. */
function origin(context: IOpContext): string | null {
  return context.requestingCellId ?? null;
}

/** `metadata` with the review mark `mark()` when the request asks for review. */
function withReview(request: Request, metadata: JSONObject, mark: () => object): JSONObject {
  return reviewed(request) ? { ...metadata, [REVIEW_KEY]: mark() as JSONObject } : metadata;
}

function setOutputs(request: Request, context: IOpContext): JSONObject {
  const panel = targetPanel(request, context);
  const shared = asCodeCell(findCell(panel, requiredString(request, 'cell_id'))).sharedModel;
  const outputs = request['outputs'];
  if (!Array.isArray(outputs)) {
    throw new RequestError("'outputs' must be a list of nbformat outputs");
  }
  const count = request['execution_count'];
  if (count !== undefined && count !== null && typeof count !== 'number') {
    throw new RequestError("'execution_count' must be a number or null when given");
  }
  notebookModel(panel).sharedModel.transact(() => {
    shared.setOutputs(outputs as unknown as nbformat.IOutput[]);
    if (count !== undefined) {
      shared.execution_count = count;
    }
  });
  return {};
}

function replaceGoatOutput(request: Request, context: IOpContext): JSONObject {
  const panel = targetPanel(request, context);
  const shared = asCodeCell(findCell(panel, requiredString(request, 'cell_id'))).sharedModel;
  const data = optionalObject(request, 'data');
  if (data === undefined) {
    throw new RequestError("'data' must be a mime bundle");
  }
  const key = requiredString(request, 'key');
  const replaced = replaceTagged(shared.getOutputs(), key, data as nbformat.IMimeBundle);
  if (replaced === undefined) {
    throw new RequestError(`no goat output '${key}' in that cell`);
  }
  shared.setOutputs(replaced);
  return {};
}

/** An approval's cell: scrolled to, highlighted, locked, its change drawn there (approval_mark.ts). */
function revealCell(request: Request, context: IOpContext): JSONObject {
  return revealMarked(targetPanel(request, context), request, context.requestMsgId);
}

/** Ends what `reveal_cell` did: editable again, no highlight, nothing drawn. */
function releaseCell(request: Request, context: IOpContext): JSONObject {
  return releaseMarked(targetPanel(request, context), request);
}

function runningCell(_request: Request, context: IOpContext): JSONObject {
  const id =
    context.requestingCellId ??
    runningCellId(context.owner) ??
    context.owner.content.activeCell?.model.id;
  if (id === undefined) {
    throw new RequestError('no running or active cell in this notebook');
  }
  return { cell_id: id };
}

function isOpen(request: Request, context: IOpContext): JSONObject {
  return { open: findPanel(context.tracker, requiredString(request, 'path')) !== undefined };
}

async function save(request: Request, context: IOpContext): Promise<JSONObject> {
  await targetPanel(request, context).context.save();
  return {};
}

/** RunCell shows its run in the target cell ([*], live outputs): see run_cell.ts. */
function startRun(request: Request, context: IOpContext): JSONObject {
  const kernel = context.owner.sessionContext.session?.kernel;
  return runStarted(targetPanel(request, context), kernel, request, context.requestMsgId);
}

function finishRun(request: Request, context: IOpContext): JSONObject {
  return runFinished(targetPanel(request, context), request);
}

/** Every operation by its `op` name. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  hello,
  list_cells: listCells,
  insert_cell: insertCell,
  replace_cell: replaceCell,
  delete_cell: deleteCell,
  set_outputs: setOutputs,
  replace_goat_output: replaceGoatOutput,
  reveal_cell: revealCell,
  release_cell: releaseCell,
  running_cell: runningCell,
  run_started: startRun,
  run_finished: finishRun,
  is_open: isOpen,
  save
};
