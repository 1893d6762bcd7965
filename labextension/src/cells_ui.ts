/**
 * How goat's cells look in the notebook: a `%%goat` cell is edited as Markdown (it is a prompt,
 * not Python), and a cell goat inserted or changed wears a small badge from its `metadata.goat`
 * (hover: which session, model and turn).
 */
import { Cell, ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

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

function stampText(stamp: JSONObject): string {
  const parts = ['Changed by goat'];
  if (typeof stamp['model'] === 'string') {
    parts.push(`model ${stamp['model']}`);
  }
  if (typeof stamp['turn'] === 'number') {
    parts.push(`turn ${stamp['turn']}`);
  }
  if (typeof stamp['session'] === 'string') {
    parts.push(`session ${stamp['session']}`);
  }
  return parts.join(' · ');
}

/** Shows or removes the badge of a cell from its `metadata.goat`. */
function syncBadge(cell: Cell): void {
  const stamp = cell.model.getMetadata('goat') as JSONObject | undefined;
  let badge = cell.node.querySelector(`:scope > .${BADGE_CLASS}`) as HTMLElement | null;
  if (!stamp || typeof stamp !== 'object') {
    badge?.remove();
    return;
  }
  if (!badge) {
    badge = document.createElement('div');
    badge.className = BADGE_CLASS;
    badge.textContent = 'goat';
    cell.node.appendChild(badge);
  }
  badge.title = stampText(stamp);
}

function watchCell(cell: Cell, defaultMime: () => string, defaultWrap: () => unknown): void {
  const model: ICellModel = cell.model;
  const update = () => {
    if (!cell.isDisposed) {
      syncMode(cell, defaultMime(), defaultWrap);
      syncBadge(cell);
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
  const defaultMime = () => notebook.codeMimetype;
  const defaultWrap = () => notebook.editorConfig.code['lineWrap'];
  const seen = new WeakSet<Cell>();
  const scan = () => {
    for (const cell of notebook.widgets) {
      if (!seen.has(cell)) {
        seen.add(cell);
        watchCell(cell, defaultMime, defaultWrap);
      }
    }
  };
  notebook.model?.cells.changed.connect(() => requestAnimationFrame(scan));
  notebook.modelChanged.connect(() => requestAnimationFrame(scan));
  void panel.context.ready.then(scan);
}
