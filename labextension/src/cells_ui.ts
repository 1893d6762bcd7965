/**
 * How goat's cells look in the notebook: a `%%goat` cell is edited as Markdown (it is a prompt,
 * not Python), and a cell goat inserted or changed wears a small badge from its `metadata.goat`
 * (hover: model, prompt, "edited by you since"; click: the %%goat cell it came from, provenance.ts).
 */
import { Cell, ICellModel } from '@jupyterlab/cells';
import { Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

import { EDITED, editedSince, followCellLinks, onBadgeClick, originCell, stampText } from './provenance';

const GOAT_PREFIX = /^%%goat(\s|$)/;
const MARKDOWN_MIME = 'text/x-ipythongfm';
const BADGE_CLASS = 'goat-badge';

/**
 * The editor language for a code cell: Markdown for `%%goat` prompts, else the notebook's; a
 * prompt's long lines wrap (as prose does), other cells keep the notebook's setting.
 */
function syncMode(cell: Cell, defaultMime: string, defaultWrap: () => unknown): void {
  if (cell.model.type !== 'code') {
    return;
  }
  const isGoat = GOAT_PREFIX.test(cell.model.sharedModel.getSource());
  const wanted = isGoat ? MARKDOWN_MIME : defaultMime;
  if (cell.model.mimeType !== wanted) {
    cell.model.mimeType = wanted;
  }
  const wasGoat = cell.hasClass('goat-prompt-cell');
  cell.toggleClass('goat-prompt-cell', isGoat);
  if (isGoat) {
    cell.editor?.setOption('lineWrap', true);
  } else if (wasGoat) {
    cell.editor?.setOption('lineWrap', defaultWrap() ?? false);
  }
}

let tickets = 0; // orders the badge's async updates: only the latest one is shown

/** Shows or removes the badge of a cell from its `metadata.goat` (async: the source is hashed). */
async function syncBadge(cell: Cell, notebook: Notebook): Promise<void> {
  const stamp = cell.model.getMetadata('goat') as JSONObject | undefined;
  let badge = cell.node.querySelector(`:scope > .${BADGE_CLASS}`) as HTMLElement | null;
  if (!stamp || typeof stamp !== 'object' || Array.isArray(stamp)) {
    badge?.remove();
    return;
  }
  if (!badge) {
    badge = document.createElement('div');
    badge.className = BADGE_CLASS;
    badge.textContent = 'goat';
    onBadgeClick(badge, notebook, cell);
    cell.node.appendChild(badge);
  }
  const ticket = String(++tickets);
  badge.dataset.ticket = ticket;
  const edited = await editedSince(stamp, cell.model.sharedModel.getSource());
  if (badge.dataset.ticket !== ticket) {
    return; // a later change is being shown
  }
  badge.title = stampText(stamp, edited);
  badge.textContent = 'goat';
  if (edited) {
    const note = document.createElement('span');
    note.className = 'goat-badge-note';
    note.textContent = EDITED;
    badge.appendChild(note);
  }
  badge.classList.toggle('goat-badge-edited', edited);
  badge.classList.toggle('goat-badge-link', originCell(stamp) !== undefined);
  badge.setAttribute('aria-label', badge.title);
}

function watchCell(cell: Cell, notebook: Notebook): void {
  const defaultMime = () => notebook.codeMimetype;
  const defaultWrap = () => notebook.editorConfig.code['lineWrap'];
  const model: ICellModel = cell.model;
  const update = () => {
    if (!cell.isDisposed) {
      syncMode(cell, defaultMime(), defaultWrap);
      void syncBadge(cell, notebook);
    }
  };
  model.contentChanged.connect(update);
  model.metadataChanged.connect(update);
  // JupyterLab sets every code cell's language when the kernel's language info arrives: put a
  // prompt's Markdown back at once, not only after the next keystroke.
  model.mimeTypeChanged.connect(update);
  cell.disposed.connect(() => {
    model.contentChanged.disconnect(update);
    model.metadataChanged.disconnect(update);
    model.mimeTypeChanged.disconnect(update);
  });
  void cell.ready.then(update);
}

/** Keeps every cell of `panel` (and cells added later) in sync with goat's looks. */
export function decorateCells(panel: NotebookPanel): void {
  const notebook = panel.content;
  const seen = new WeakSet<Cell>();
  const scan = () => {
    for (const cell of notebook.widgets) {
      if (!seen.has(cell)) {
        seen.add(cell);
        watchCell(cell, notebook);
      }
    }
  };
  followCellLinks(notebook);
  notebook.model?.cells.changed.connect(() => requestAnimationFrame(scan));
  notebook.modelChanged.connect(() => requestAnimationFrame(scan));
  void panel.context.ready.then(scan);
}
