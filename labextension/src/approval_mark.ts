/**
 * The cell an approval is about, shown at the cell until the answer (`reveal_cell` / `release_cell`):
 * the notebook scrolls to it and highlights it; RunCell's, a NotebookEdit's changed or deleted cell
 * is read-only meanwhile; a NotebookEdit shows its diff at the changed cell, marks the cell it would
 * delete, and shows the new cell's source where an insert would go. Everything goes when the kernel
 * says so, when the run that asked ends (answered, stopped, interrupted, kernel restarted), and comes
 * back after a reload from the open prompt (live.ts). Model text is only ever set as textContent.
 */
import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { JSONObject } from '@lumino/coreutils';

import { findCell, hasCell } from './cells';
import { optionalObject, optionalString, Request, requiredString } from './protocol';

/** How long a cell stays highlighted after a reveal without a lock (nothing to wait for). */
const HIGHLIGHT_MS = 6000;
const HIGHLIGHT = 'goat-highlight';
const LOCKED = 'goat-locked';
/** On the marked cell (edit, delete, run) or on the placeholder of a cell to insert. */
export const TARGET = 'goat-approval-target';
const DELETE = 'goat-approval-delete';
const DRAWN = 'goat-approval-drawn'; // every node this module adds (the note, the placeholder)
const KEY = 'goatApprovalFor'; // data-goat-approval-for: the request's cell_id
const LOCK_KEY = 'goatApprovalLock'; // on a cell an approval made read-only: 'added' or 'kept' its lock class

type Kind = 'run' | 'edit' | 'insert' | 'delete';

interface IMark {
  kind: Kind;
  diff: string;
  source: string;
  cellType: string;
}

function markOf(request: Request): IMark | undefined {
  const mark = optionalObject(request, 'mark');
  if (mark === undefined) {
    return undefined;
  }
  const kind = ['run', 'edit', 'insert', 'delete'].includes(String(mark['kind'])) ? mark['kind'] : 'run';
  const text = (name: string) => (typeof mark[name] === 'string' ? (mark[name] as string) : '');
  return { kind: kind as Kind, diff: text('diff'), source: text('source'), cellType: text('cell_type') || 'code' };
}

/**
 * Scrolls to the cell and highlights it; with `lock`, it is also read-only (and the notebook leaves
 * edit mode) until `release_cell`, so a keystroke cannot change what the user is approving. With a
 * `mark`, the change is drawn at the cell and cleared when `msgId`'s run ends.
 */
export function revealMarked(panel: NotebookPanel, request: Request, msgId?: string): JSONObject {
  const mark = markOf(request);
  if (mark?.kind === 'insert') {
    return revealInsert(panel, optionalString(request, 'cell_id') ?? '', mark, msgId);
  }
  const cellId = requiredString(request, 'cell_id');
  const located = findCell(panel, cellId);
  const widget = panel.content.widgets[located.index];
  if (!widget) {
    return { index: located.index };
  }
  void panel.content.scrollToCell(widget, 'center');
  widget.addClass(HIGHLIGHT);
  if (request['lock'] === true) {
    panel.content.mode = 'command';
    // A cell tagged goat:locked wears the class already (cell_actions.ts): it keeps it afterwards.
    widget.node.dataset[LOCK_KEY] ??= widget.hasClass(LOCKED) ? 'kept' : 'added';
    widget.readOnly = true;
    widget.addClass(LOCKED);
  } else if (!mark) {
    setTimeout(() => widget.removeClass(HIGHLIGHT), HIGHLIGHT_MS);
  }
  if (mark) {
    drawAtCell(widget, cellId, mark);
    clearWhenRunEnds(panel, msgId, () => unmark(panel, cellId));
  }
  return { index: located.index };
}

/** Ends what `revealMarked` did for this cell: editable again, nothing highlighted or drawn. */
export function releaseMarked(panel: NotebookPanel, request: Request): JSONObject {
  const cellId = optionalString(request, 'cell_id') ?? '';
  unmark(panel, cellId);
  return hasCell(panel, cellId) ? { index: findCell(panel, cellId).index } : {};
}

/** Draws again, after a reload, the marks of the prompts a run still waits on (live.ts). */
export function restoreMarks(panel: NotebookPanel, marks: (JSONObject | null | undefined)[], msgId: string): void {
  for (const mark of marks) {
    if (mark && !optionalString(mark, 'path')) {
      try {
        revealMarked(panel, mark, msgId);
      } catch (error) {
        console.warn('goat-jupyter: an approval mark could not be drawn again', error);
      }
    }
  }
}

function unmark(panel: NotebookPanel, cellId: string): void {
  panel.node.querySelectorAll<HTMLElement>(`.${DRAWN}`).forEach(node => {
    if (node.dataset[KEY] === cellId) {
      node.remove();
    }
  });
  for (const widget of panel.content.widgets) {
    if (widget.model.id === cellId) {
      const lock = widget.node.dataset[LOCK_KEY];
      if (lock !== undefined) {
        widget.readOnly = false;
        widget.toggleClass(LOCKED, lock === 'kept');
        delete widget.node.dataset[LOCK_KEY];
      }
      [HIGHLIGHT, TARGET, DELETE].forEach(name => widget.removeClass(name));
    }
  }
}

/** The edit's diff, or the sentence saying the cell would be deleted, in the cell under its input. */
function drawAtCell(widget: Cell, cellId: string, mark: IMark): void {
  if (mark.kind === 'run') {
    return;
  }
  widget.addClass(TARGET);
  widget.toggleClass(DELETE, mark.kind === 'delete');
  const note = drawn('div', cellId, 'goat-approval-note');
  if (mark.kind === 'delete') {
    note.append(heading('goat asks to delete this cell. Allow or Deny in the %%goat cell.'));
  } else {
    note.append(heading('goat asks to change this cell. Allow or Deny in the %%goat cell.'), diffView(mark.diff));
  }
  const input = widget.node.querySelector(':scope > .jp-Cell-inputWrapper');
  widget.node.insertBefore(note, input?.nextSibling ?? null);
}

/** A placeholder with the new cell's source where the insert would put it. */
function revealInsert(panel: NotebookPanel, afterId: string, mark: IMark, msgId?: string): JSONObject {
  const widgets = panel.content.widgets;
  const index = afterId ? findCell(panel, afterId).index : -1;
  const host = widgets[Math.max(index, 0)];
  if (!host) {
    return { index: 0 };
  }
  const ghost = drawn('div', afterId, `goat-approval-insert ${TARGET} ${HIGHLIGHT}`);
  ghost.append(
    heading(`goat asks to insert a new ${mark.cellType} cell here. Allow or Deny in the %%goat cell.`),
    element('pre', 'goat-approval-source', mark.source)
  );
  host.node.insertBefore(ghost, index < 0 ? host.node.firstChild : null);
  void panel.content.scrollToCell(host, 'center').then(() => ghost.scrollIntoView({ block: 'nearest' }));
  clearWhenRunEnds(panel, msgId, () => unmark(panel, afterId));
  return { index: index + 1 };
}

/** The unified diff line by line, its hunks' lines coloured; the file header lines left out. */
function diffView(diff: string): HTMLElement {
  const box = element('div', 'goat-approval-diff', '');
  for (const line of diff.split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++')) {
      continue;
    }
    const kind = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
    box.append(element('div', `goat-approval-diff-${kind}`, line || ' '));
  }
  return box;
}

function heading(text: string): HTMLElement {
  return element('div', 'goat-approval-heading', text);
}

function drawn(tag: 'div', cellId: string, className: string): HTMLElement {
  const node = element(tag, `${DRAWN} ${className}`, '');
  node.dataset[KEY] = cellId;
  return node;
}

function element(tag: 'div' | 'pre', className: string, text: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

/** Kernel states that mean every run is over (a restarted kernel starts again). */
const GONE = ['starting', 'restarting', 'autorestarting', 'dead', 'terminating'];

/** Runs `clear` once the execute request `msgId` is done, or the kernel restarts or goes away. */
function clearWhenRunEnds(panel: NotebookPanel, msgId: string | undefined, clear: () => void): void {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !msgId) {
    return;
  }
  const done = () => {
    kernel.iopubMessage.disconnect(onMessage);
    kernel.statusChanged.disconnect(onStatus);
    panel.sessionContext.kernelChanged.disconnect(done);
    clear();
  };
  const onMessage = (_sender: Kernel.IKernelConnection, msg: KernelMessage.IIOPubMessage) => {
    const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
    const state = String((msg.content as JSONObject)['execution_state']);
    if (msg.header.msg_type === 'status' && ((state === 'idle' && parent.msg_id === msgId) || GONE.includes(state))) {
      done();
    }
  };
  const onStatus = (_sender: Kernel.IKernelConnection, status: Kernel.Status) => {
    if (GONE.includes(status)) {
      done();
    }
  };
  kernel.iopubMessage.connect(onMessage);
  kernel.statusChanged.connect(onStatus);
  panel.sessionContext.kernelChanged.connect(done);
}
