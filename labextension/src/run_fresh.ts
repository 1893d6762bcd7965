/**
 * "Run fresh" under a `%%goat` cell that replayed its recording, or stopped replaying it: runs the cell
 * again asking the model, as `%%goat --fresh` does, without editing the magic line. The kernel marks
 * such a cell's recording output (`metadata.goat.replayed`, saved with the notebook, so the button is
 * there again when the notebook is reopened); the button sends the execute request with the metadata
 * `goatFresh: true` (goat_jupyter/kernel/replay_choice.py reads it).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell, ICellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

export const RUN_FRESH = 'goat:run-fresh';
const BAR_CLASS = 'goat-run-fresh';

/** Whether the cell's outputs hold a recording that this run replayed (or stopped replaying). */
export function wasReplayed(model: ICellModel): boolean {
  if (model.type !== 'code') {
    return false;
  }
  const outputs = (model as CodeCell['model']).outputs;
  for (let index = 0; index < outputs.length; index++) {
    const goat = (outputs.get(index).toJSON().metadata as JSONObject | undefined)?.['goat'];
    if (goat && typeof goat === 'object' && !Array.isArray(goat) && (goat as JSONObject)['replayed'] === true) {
      return true;
    }
  }
  return false;
}

class RunFresh {
  constructor(
    private readonly app: JupyterFrontEnd,
    private readonly tracker: INotebookTracker
  ) {}

  register(): void {
    this.app.commands.addCommand(RUN_FRESH, {
      label: 'Run fresh',
      caption: 'Run this %%goat cell again with the model instead of its recording (like %%goat --fresh)',
      isEnabled: args => this.target(args) !== null,
      execute: args => this.run(args)
    });
  }

  target(args: { cellId?: unknown }): { panel: NotebookPanel; cell: CodeCell } | null {
    const panel = this.tracker.currentWidget;
    const cells = panel?.content.widgets ?? [];
    const cell =
      typeof args.cellId === 'string' ? cells.find(c => c.model.id === args.cellId) : panel?.content.activeCell;
    return panel && cell && cell.model.type === 'code' ? { panel, cell: cell as CodeCell } : null;
  }

  async run(args: { cellId?: unknown }): Promise<void> {
    const found = this.target(args);
    if (found) {
      const { panel, cell } = found;
      panel.content.activeCellIndex = panel.content.widgets.indexOf(cell);
      await CodeCell.execute(cell, panel.sessionContext, { goatFresh: true });
    }
  }

  /** The button below the outputs of a replayed cell, and only there. */
  sync(cell: Cell): void {
    const existing = cell.node.querySelector(`:scope > .${BAR_CLASS}`);
    if (!wasReplayed(cell.model)) {
      existing?.remove();
      return;
    }
    if (existing) {
      return;
    }
    const bar = document.createElement('div');
    bar.className = BAR_CLASS;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-mod-styled goat-run-fresh-button';
    button.textContent = '↻ Run fresh';
    button.title = this.app.commands.caption(RUN_FRESH, { cellId: cell.model.id });
    button.addEventListener('click', event => {
      event.stopPropagation();
      void this.app.commands.execute(RUN_FRESH, { cellId: cell.model.id });
    });
    const note = document.createElement('span');
    note.className = 'goat-run-fresh-note';
    note.textContent = 'This cell replayed its recording: no model was asked.';
    bar.append(button, note);
    const wrapper = cell.node.querySelector(':scope > .jp-Cell-outputWrapper');
    if (wrapper) {
      wrapper.insertAdjacentElement('afterend', bar);
    } else {
      cell.node.appendChild(bar);
    }
  }

  watch(panel: NotebookPanel): void {
    const seen = new WeakSet<Cell>();
    const scan = () => {
      for (const cell of panel.content.widgets) {
        if (!seen.has(cell) && cell.model.type === 'code') {
          seen.add(cell);
          const update = () => !cell.isDisposed && this.sync(cell);
          (cell as CodeCell).model.outputs.changed.connect(update);
          void cell.ready.then(update);
        }
      }
    };
    panel.content.model?.cells.changed.connect(scan);
    panel.context.ready.then(scan).catch(() => undefined);
    scan();
  }
}

export const runFreshPlugin: JupyterFrontEndPlugin<void> = {
  id: 'goat-jupyter:run-fresh',
  description: 'A "Run fresh" button under a %%goat cell that replayed its recording.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const runFresh = new RunFresh(app, tracker);
    runFresh.register();
    tracker.forEach(panel => runFresh.watch(panel));
    tracker.widgetAdded.connect((_sender, panel) => runFresh.watch(panel));
  }
};
