/**
 * The review marks of review.ts on the cells: a panel above each pending cell (the diff of an edit,
 * "new cell", or a deleted cell's placeholder) with Keep and Undo, a bar in the `%%goat` cell whose
 * run made the changes (Keep all, Undo all, what was decided), the commands with their shortcuts,
 * and each decision sent to the kernel (`goat.review`), which tells the model at its next turn.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import {
  IDecision,
  IReview,
  keep,
  lineDiff,
  pendingIndexes,
  ranNote,
  reviewOf,
  sourceOf,
  undo
} from './review';

export const REVIEW_TARGET = 'goat.review';
const PANEL_CLASS = 'goat-review';
const BAR_CLASS = 'goat-review-bar';
const PLACEHOLDER_CLASS = 'goat-review-placeholder';
const PENDING_CLASS = 'goat-review-pending';
const CONTEXT_LINES = 1;

export const ReviewCommands = {
  next: 'goat:review-next',
  keep: 'goat:review-keep',
  undo: 'goat:review-undo',
  keepAll: 'goat:review-keep-all',
  undoAll: 'goat:review-undo-all'
};

function element(tag: string, className: string, text = ''): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

/** One notebook's review state on screen: panels, bars, and what was decided in this page. */
class PanelReview {
  constructor(
    readonly panel: NotebookPanel,
    private readonly app: JupyterFrontEnd
  ) {
    const schedule = () => this.schedule();
    panel.content.modelChanged.connect(schedule);
    void panel.context.ready.then(() => {
      panel.content.model?.cells.changed.connect(schedule);
      schedule();
    });
  }

  private readonly _watched = new WeakSet<object>();

  /** Decisions and notes per %%goat cell (by id), and messages per cell (by id). */
  readonly decided = new Map<string, string[]>();
  readonly notes = new Map<string, string>();
  readonly messages = new Map<string, string>();

  private _frame = 0;

  schedule(): void {
    if (!this._frame) {
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        this.refresh();
      });
    }
  }

  refresh(): void {
    if (this.panel.isDisposed) {
      return;
    }
    const origins = new Map<string, number>();
    for (const cell of this.panel.content.widgets) {
      if (!this._watched.has(cell.model)) {
        this._watched.add(cell.model);
        cell.model.metadataChanged.connect(() => this.schedule());
        cell.model.contentChanged.connect(() => this.schedule());
      }
      const review = reviewOf(cell.model);
      this.syncCell(cell, review);
      if (review?.origin) {
        origins.set(review.origin, (origins.get(review.origin) ?? 0) + 1);
      }
    }
    for (const cell of this.panel.content.widgets) {
      this.syncBar(cell, origins.get(cell.model.id) ?? 0);
    }
  }

  private button(label: string, command: string, args: { cellId?: string; origin?: string }, title: string): HTMLButtonElement {
    const button = element('button', 'jp-mod-styled goat-review-button', label) as HTMLButtonElement;
    button.type = 'button';
    button.dataset.goatReview = label.toLowerCase().replace(/ /g, '-');
    const keys = this.app.commands.keyBindings.find(binding => binding.command === command)?.keys;
    button.title = keys ? `${title} (${keys.join(' ')})` : title;
    button.addEventListener('click', event => {
      event.stopPropagation();
      void this.app.commands.execute(command, args);
    });
    return button;
  }

  private syncCell(cell: Cell, review: IReview | null): void {
    const existing = cell.node.querySelector(`:scope > .${PANEL_CLASS}`) as HTMLElement | null;
    cell.toggleClass(PLACEHOLDER_CLASS, review?.kind === 'deleted');
    cell.toggleClass(PENDING_CLASS, review !== null);
    const note = this.notes.get(cell.model.id);
    if (!review && !note) {
      existing?.remove();
      return;
    }
    const key = JSON.stringify([review, cell.model.sharedModel.getSource(), this.messages.get(cell.model.id), note]);
    if (existing?.dataset.key === key) {
      return;
    }
    const node = review ? this.reviewPanel(cell, review) : this.notePanel(cell, note ?? '');
    node.dataset.key = key;
    if (existing) {
      existing.replaceWith(node);
    } else {
      cell.node.insertBefore(node, cell.node.querySelector(':scope > .jp-Cell-inputWrapper'));
    }
  }

  private reviewPanel(cell: Cell, review: IReview): HTMLElement {
    const node = element('div', PANEL_CLASS);
    node.dataset.goatReviewKind = review.kind;
    const head = element('div', 'goat-review-head');
    const titles = { edited: 'goat changed this cell', created: 'goat created this cell', deleted: 'goat deleted a cell here' };
    head.append(element('span', 'goat-review-title', titles[review.kind]));
    const args = { cellId: cell.model.id };
    head.append(
      this.button('Keep', ReviewCommands.keep, args, review.kind === 'deleted' ? 'Keep the deletion' : 'Keep the change'),
      this.button('Undo', ReviewCommands.undo, args, review.kind === 'created' ? 'Remove the new cell' : 'Put the cell back as it was')
    );
    node.append(head);
    if (review.before) {
      const after = review.kind === 'deleted' ? '' : cell.model.sharedModel.getSource();
      node.append(diffView(sourceOf(review.before), after, review.kind === 'deleted'));
    }
    const message = this.messages.get(cell.model.id);
    if (message) {
      node.append(element('div', 'goat-review-message', message));
    }
    return node;
  }

  /** After an Undo of code that ran: what the kernel still holds, and a Re-run button. */
  private notePanel(cell: Cell, note: string): HTMLElement {
    const node = element('div', `${PANEL_CLASS} goat-review-note`);
    node.append(element('span', 'goat-review-message', note));
    if (cell.model.type === 'code') {
      const rerun = element('button', 'jp-mod-styled goat-review-button', 'Re-run') as HTMLButtonElement;
      rerun.dataset.goatReview = 're-run';
      rerun.addEventListener('click', event => {
        event.stopPropagation();
        this.notes.delete(cell.model.id);
        void CodeCell.execute(cell as CodeCell, this.panel.sessionContext);
        this.schedule();
      });
      node.append(rerun);
    }
    const dismiss = element('button', 'jp-mod-styled goat-review-button', 'Dismiss') as HTMLButtonElement;
    dismiss.addEventListener('click', event => {
      event.stopPropagation();
      this.notes.delete(cell.model.id);
      this.schedule();
    });
    node.append(dismiss);
    return node;
  }

  /** The bar under a %%goat cell's output: its run's pending count, Keep all / Undo all, decisions. */
  private syncBar(cell: Cell, pending: number): void {
    const existing = cell.node.querySelector(`:scope > .${BAR_CLASS}`) as HTMLElement | null;
    const decided = this.decided.get(cell.model.id) ?? [];
    if (!pending && !decided.length) {
      existing?.remove();
      return;
    }
    const key = JSON.stringify([pending, decided]);
    if (existing?.dataset.key === key) {
      return;
    }
    const bar = element('div', BAR_CLASS);
    bar.dataset.key = key;
    if (pending) {
      const line = element('div', 'goat-review-head');
      const count = `${pending} cell${pending === 1 ? '' : 's'}`;
      line.append(element('span', 'goat-review-title', `This run changed ${count}, awaiting your review`));
      const args = { origin: cell.model.id };
      line.append(
        this.button('Keep all', ReviewCommands.keepAll, args, "Keep all of this run's changes"),
        this.button('Undo all', ReviewCommands.undoAll, args, "Undo all of this run's changes"),
        this.button('Next', ReviewCommands.next, {}, 'Go to the next cell awaiting review')
      );
      bar.append(line);
    }
    decided.forEach(text => bar.append(element('div', 'goat-review-decided', text)));
    if (existing) {
      existing.replaceWith(bar);
    } else {
      const wrapper = cell.node.querySelector(':scope > .jp-Cell-outputWrapper');
      if (wrapper) {
        wrapper.insertAdjacentElement('afterend', bar);
      } else {
        cell.node.appendChild(bar);
      }
    }
  }

  /** Shows decisions where they belong and sends them to the kernel (it tells the model). */
  record(found: IDecision[]): void {
    const sent = found.filter(one => one.action !== 'refused');
    for (const one of found) {
      if (one.action === 'refused') {
        this.messages.set(one.cell_id, one.text);
        continue;
      }
      this.messages.delete(one.cell_id);
      const note = ranNote(one);
      const origin = one.origin ?? '';
      const lines = this.decided.get(origin) ?? [];
      lines.push(note && one.kind === 'created' ? `${capital(one.text)}. ${note}` : capital(one.text));
      this.decided.set(origin, lines);
      if (note && one.kind === 'edited') {
        this.notes.set(one.cell_id, note);
      }
    }
    if (sent.length) {
      tellKernel(this.panel, sent);
    }
    this.schedule();
  }
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The changed lines with a line of context, `…` between hunks; a deleted cell's source all removed. */
function diffView(before: string, after: string, deleted: boolean): HTMLElement {
  const pre = element('pre', 'goat-review-diff');
  const lines = deleted ? before.split('\n').map(text => ({ op: '-' as const, text })) : lineDiff(before, after);
  const near = (index: number) =>
    lines.slice(Math.max(0, index - CONTEXT_LINES), index + CONTEXT_LINES + 1).some(line => line.op !== ' ');
  let gap = false;
  lines.forEach((line, index) => {
    if (line.op === ' ' && !near(index)) {
      if (!gap) {
        pre.append(element('div', 'goat-diff-gap', '…'));
      }
      gap = true;
      return;
    }
    gap = false;
    const kind = line.op === '-' ? 'goat-diff-del' : line.op === '+' ? 'goat-diff-add' : 'goat-diff-same';
    pre.append(element('div', kind, `${line.op} ${line.text}`));
  });
  return pre;
}

/** Decisions to the kernel's `goat.review` target (a kernel without goat closes the comm at once). */
function tellKernel(panel: NotebookPanel, decisions: IDecision[]): void {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || kernel.isDisposed) {
    return;
  }
  try {
    const comm = kernel.createComm(REVIEW_TARGET);
    comm.open({ path: panel.context.path, decisions: decisions as never });
  } catch (error) {
    console.warn('goat-jupyter: could not tell the kernel about a review decision', error);
  }
}

class Review {
  constructor(
    private readonly app: JupyterFrontEnd,
    private readonly tracker: INotebookTracker
  ) {}

  private readonly views = new WeakMap<NotebookPanel, PanelReview>();

  watch(panel: NotebookPanel): void {
    this.views.set(panel, new PanelReview(panel, this.app));
  }

  /** The panel and cell index a command acts on: the cell whose button was pressed, else the active one. */
  target(args: { cellId?: unknown }): { view: PanelReview; index: number } | null {
    const panel = this.tracker.currentWidget;
    const view = panel ? this.views.get(panel) : undefined;
    if (!panel || !view) {
      return null;
    }
    const index =
      typeof args.cellId === 'string'
        ? panel.content.widgets.findIndex(cell => cell.model.id === args.cellId)
        : panel.content.activeCellIndex;
    const cell = panel.content.widgets[index];
    return cell && reviewOf(cell.model) ? { view, index } : null;
  }

  current(): PanelReview | null {
    const panel = this.tracker.currentWidget;
    return (panel && this.views.get(panel)) ?? null;
  }

  /** Makes the next pending cell (below the active one, wrapping) active and shows it. */
  next(view: PanelReview): boolean {
    const notebook = view.panel.content;
    const pending = pendingIndexes(view.panel);
    const index = pending.find(i => i > notebook.activeCellIndex) ?? pending[0];
    if (index === undefined) {
      return false;
    }
    notebook.mode = 'command';
    notebook.activeCellIndex = index;
    // Not scrollToCell: it activates the cell, which puts the focus in its editor (and the next
    // G K would type into it). Command mode keeps the focus on the cell itself.
    void notebook
      .scrollToItem(index, 'center')
      .catch(() => undefined)
      .then(() => notebook.widgets[index]?.node.focus({ preventScroll: true }));
    return true;
  }

  async decide(args: { cellId?: unknown }, action: 'keep' | 'undo'): Promise<void> {
    const found = this.target(args);
    if (!found) {
      return;
    }
    const decision = action === 'keep' ? keep(found.view.panel, found.index) : await undo(found.view.panel, found.index);
    if (decision) {
      found.view.record([decision]);
    }
    if (typeof args.cellId !== 'string' && decision?.action !== 'refused') {
      this.next(found.view); // by keyboard: on to the next cell awaiting review
    }
  }

  /** Keep or Undo every pending cell of a run (`origin`) or of the notebook, bottom up. */
  async decideAll(args: { origin?: unknown }, action: 'keep' | 'undo'): Promise<void> {
    const view = this.current();
    if (!view) {
      return;
    }
    const origin = typeof args.origin === 'string' ? args.origin : undefined;
    const decisions: IDecision[] = [];
    for (const index of pendingIndexes(view.panel, origin).reverse()) {
      const decision = action === 'keep' ? keep(view.panel, index) : await undo(view.panel, index);
      if (decision) {
        decisions.unshift(decision);
      }
    }
    view.record(decisions);
  }

  register(palette: ICommandPalette | null): void {
    const commands = this.app.commands;
    const anyPending = () => {
      const view = this.current();
      return view !== null && pendingIndexes(view.panel).length > 0;
    };
    commands.addCommand(ReviewCommands.next, {
      label: 'Go to the next cell goat changed',
      caption: 'Select the next cell whose goat change awaits Keep or Undo',
      isEnabled: anyPending,
      execute: () => {
        const view = this.current();
        if (view) {
          this.next(view);
        }
      }
    });
    commands.addCommand(ReviewCommands.keep, {
      label: "Keep goat's change to this cell",
      isEnabled: args => this.target(args) !== null,
      execute: args => this.decide(args, 'keep')
    });
    commands.addCommand(ReviewCommands.undo, {
      label: "Undo goat's change to this cell",
      isEnabled: args => this.target(args) !== null,
      execute: args => this.decide(args, 'undo')
    });
    commands.addCommand(ReviewCommands.keepAll, {
      label: "Keep all of goat's changes",
      isEnabled: anyPending,
      execute: args => this.decideAll(args, 'keep')
    });
    commands.addCommand(ReviewCommands.undoAll, {
      label: "Undo all of goat's changes",
      isEnabled: anyPending,
      execute: args => this.decideAll(args, 'undo')
    });
    Object.values(ReviewCommands).forEach(command => palette?.addItem({ command, category: 'goat' }));
    this.tracker.activeCellChanged.connect(() =>
      Object.values(ReviewCommands).forEach(id => commands.notifyCommandChanged(id))
    );
  }
}

export const reviewPlugin: JupyterFrontEndPlugin<void> = {
  id: 'goat-jupyter:review',
  description: "Keep or Undo goat's notebook edits on the cells they changed.",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, palette: ICommandPalette | null): void => {
    const review = new Review(app, tracker);
    review.register(palette);
    tracker.forEach(panel => review.watch(panel));
    tracker.widgetAdded.connect((_sender, panel) => review.watch(panel));
  }
};
