/**
 * goat's cell actions: "Fix with goat" and "Explain" under an error output, and "Ask goat about
 * this cell" and "Lock for goat" in the cell toolbar. Fix and Explain insert a `%%goat` cell below
 * the failing cell whose prompt names that cell by id (the agent reads the live cell and its
 * traceback with its own tools) and run it. The lock is the cell tag `goat:locked`: the agent must
 * ask before editing, deleting or running the cell, in every permission mode.
 * The setting `goat-jupyter:cell-actions` `enabled` turns all of it off.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell, ICellModel } from '@jupyterlab/cells';
import * as nbformat from '@jupyterlab/nbformat';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

export const LOCK_TAG = 'goat:locked';
const PLUGIN_ID = 'goat-jupyter:cell-actions';
const ACTIONS_CLASS = 'goat-error-actions';
const LOCK_CLASS = 'goat-locked';
const EVALUE_CHARS = 80;

export const CommandIds = {
  fix: 'goat:fix-error',
  explain: 'goat:explain-error',
  ask: 'goat:ask-about-cell',
  lock: 'goat:toggle-lock',
  conversations: 'goat:past-conversations'
};

const PALETTE_CATEGORY = 'goat';

const lockIcon = new LabIcon({
  name: 'goat-jupyter:lock',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24"><path class="jp-icon3" fill="#616161" d="M17 9h-1V7a4 4 0 1 0-8 0v2H7a2 2 0 0 0-2 2v9a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2v-9a2 2 0 0 0-2-2zm-7-2a2 2 0 1 1 4 0v2h-4V7zm2 11a2 2 0 1 1 0-4 2 2 0 0 1 0 4z"/></svg>'
});

const askIcon = new LabIcon({
  name: 'goat-jupyter:ask',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24"><path class="jp-icon3" fill="#616161" d="M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm7 11h2v-2h-2v2zm1-9a3 3 0 0 0-3 3h2a1 1 0 1 1 1 1 1 1 0 0 0-1 1v1h2v-.2A3 3 0 0 0 12 5z"/></svg>'
});

/**
 * Errors that are endings, not failures: a cell the user stopped, and goat's own one-line endings
 * (goat_jupyter/kernel/magic.py GoatInterruptedError, kernel/replay_run.py ReplayStoppedError;
 * tests/test_labextension_names.py keeps these names in step with the kernel's).
 */
export const NOTHING_TO_FIX = ['KeyboardInterrupt', 'GoatInterruptedError', 'ReplayStoppedError'];

/** The first error output of a code cell when it is one there is something to fix in, else null. */
export function firstError(model: ICellModel): nbformat.IError | null {
  if (model.type !== 'code') {
    return null;
  }
  const outputs = (model as CodeCell['model']).outputs;
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs.get(i).toJSON();
    if (output.output_type === 'error') {
      const error = output as nbformat.IError;
      return NOTHING_TO_FIX.includes(String(error.ename)) ? null : error;
    }
  }
  return null;
}

function shortError(error: nbformat.IError): string {
  const value = String(error.evalue ?? '').split('\n')[0];
  const shown = value.length > EVALUE_CHARS ? `${value.slice(0, EVALUE_CHARS)}…` : value;
  return shown ? `${error.ename}: ${shown}` : String(error.ename);
}

/**
 * The prompt of the `%%goat` cell an action inserts: it names the cell as goat's transcript does
 * ("cell 4": 1-based, from the top) and says where it is (just above), not a pasted traceback.
 */
export function promptFor(action: 'fix' | 'explain' | 'ask', cellNumber: number, error: nbformat.IError | null): string {
  const cell = `cell ${cellNumber}, the cell just above this one`;
  const what = error ? ` (${shortError(error)})` : '';
  if (action === 'fix') {
    return (
      `%%goat\nFix the error in ${cell}${what}. Read that cell and its traceback in the live ` +
      'notebook first, fix the cause, then run the cell again.'
    );
  }
  if (action === 'explain') {
    return (
      `%%goat\nExplain the error in ${cell}${what}. Read that cell and its traceback in the ` +
      'live notebook first. Do not change anything.'
    );
  }
  return `%%goat\nAbout ${cell}: `;
}

function cellTags(model: ICellModel): string[] {
  const tags = model.getMetadata('tags');
  return Array.isArray(tags) ? tags.filter((tag): tag is string => typeof tag === 'string') : [];
}

export function isLocked(model: ICellModel): boolean {
  return cellTags(model).includes(LOCK_TAG);
}

function setLocked(model: ICellModel, locked: boolean): void {
  const others = cellTags(model).filter(tag => tag !== LOCK_TAG);
  const tags = locked ? [...others, LOCK_TAG] : others;
  if (tags.length) {
    model.setMetadata('tags', tags);
  } else {
    model.deleteMetadata('tags');
  }
}

class CellActions {
  enabled = true;

  constructor(
    private readonly app: JupyterFrontEnd,
    private readonly tracker: INotebookTracker
  ) {}

  /** The cell an action applies to: the one whose button was pressed, else the active cell. */
  target(args: { cellId?: unknown }): { panel: NotebookPanel; cell: Cell } | null {
    const panel = this.tracker.currentWidget;
    if (!panel) {
      return null;
    }
    const cells = panel.content.widgets;
    const cell =
      typeof args.cellId === 'string'
        ? cells.find(candidate => candidate.model.id === args.cellId)
        : panel.content.activeCell;
    return cell ? { panel, cell } : null;
  }

  /** How goat's transcript names the cell: its 1-based position from the top. */
  number(found: { panel: NotebookPanel; cell: Cell }): number {
    return found.panel.content.widgets.indexOf(found.cell) + 1;
  }

  /** Insert a `%%goat` cell below `cell` with `source`; run it unless the user still has to type. */
  async insertBelow(panel: NotebookPanel, cell: Cell, source: string, run: boolean): Promise<void> {
    const notebook = panel.content;
    notebook.activeCellIndex = notebook.widgets.indexOf(cell);
    NotebookActions.insertBelow(notebook);
    const inserted = notebook.activeCell;
    if (!inserted) {
      return;
    }
    inserted.model.sharedModel.setSource(source);
    if (run) {
      await NotebookActions.run(notebook, panel.sessionContext);
      return;
    }
    // The editor exists only once the cell is rendered, and entering edit mode focuses it (which
    // puts the caret at the start): place the caret after both, at the end, where the user types.
    await inserted.ready;
    notebook.mode = 'edit';
    await new Promise(resolve => requestAnimationFrame(resolve));
    const editor = inserted.editor;
    if (editor) {
      const lines = source.split('\n');
      editor.focus();
      editor.setCursorPosition({ line: lines.length - 1, column: lines[lines.length - 1].length });
    }
  }

  /** Insert a code cell below the active one with `source` and run it. */
  async runBelow(source: string): Promise<void> {
    const panel = this.tracker.currentWidget;
    const cell = panel?.content.activeCell;
    if (panel && cell) {
      await this.insertBelow(panel, cell, source, true);
    }
  }

  register(): void {
    const commands = this.app.commands;
    const onError = (action: 'fix' | 'explain') => async (args: { cellId?: unknown }) => {
      const found = this.target(args);
      const error = found ? firstError(found.cell.model) : null;
      if (found && error) {
        await this.insertBelow(found.panel, found.cell, promptFor(action, this.number(found), error), true);
      }
    };
    const hasError = (args: { cellId?: unknown }) => {
      const found = this.target(args);
      return this.enabled && !!found && firstError(found.cell.model) !== null;
    };
    commands.addCommand(CommandIds.fix, {
      label: 'Fix with goat',
      caption: 'Insert and run a %%goat cell below that fixes this error',
      isEnabled: hasError,
      isVisible: () => this.enabled,
      execute: onError('fix')
    });
    commands.addCommand(CommandIds.explain, {
      label: 'Explain with goat',
      caption: 'Insert and run a %%goat cell below that explains this error',
      isEnabled: hasError,
      isVisible: () => this.enabled,
      execute: onError('explain')
    });
    commands.addCommand(CommandIds.ask, {
      label: 'Ask goat about this cell',
      caption: 'Insert a %%goat cell below that names this cell; type your question and run it',
      icon: args => (args.toolbar ? askIcon : undefined),
      isVisible: () => this.enabled,
      isEnabled: args => this.enabled && !!this.target(args),
      execute: async args => {
        const found = this.target(args);
        if (found) {
          await this.insertBelow(found.panel, found.cell, promptFor('ask', this.number(found), null), false);
        }
      }
    });
    commands.addCommand(CommandIds.lock, {
      label: args => {
        const found = this.target(args);
        return found && isLocked(found.cell.model) ? 'Unlock for goat' : 'Lock for goat';
      },
      caption: 'Locked cells: goat asks before editing, deleting or running them, in every mode',
      icon: args => (args.toolbar ? lockIcon : undefined),
      isToggled: args => {
        const found = this.target(args);
        return !!found && isLocked(found.cell.model);
      },
      isVisible: () => this.enabled,
      execute: args => {
        const found = this.target(args);
        if (found) {
          setLocked(found.cell.model, !isLocked(found.cell.model));
          commands.notifyCommandChanged(CommandIds.lock);
        }
      }
    });
  }

  /** Saved conversations: `%goat resume` lists them, newest first, each with the line that resumes it. */
  registerConversations(): void {
    this.app.commands.addCommand(CommandIds.conversations, {
      label: 'List past goat conversations',
      caption: 'Insert and run a `%goat resume` cell below: the saved conversations, newest first',
      isVisible: () => this.enabled,
      isEnabled: () => this.enabled && !!this.tracker.currentWidget?.content.activeCell,
      execute: async () => {
        const panel = this.tracker.currentWidget;
        await this.runBelow(panel && (await goatLoaded(panel)) ? RESUME : `${LOAD_GOAT}\n${RESUME}`);
      }
    });
  }

  /** Buttons under an error output, and the lock marker, kept in step with the cell. */
  watch(cell: Cell): void {
    const update = () => {
      if (!cell.isDisposed) {
        this.syncErrorActions(cell);
        cell.toggleClass(LOCK_CLASS, this.enabled && isLocked(cell.model));
      }
    };
    if (cell.model.type === 'code') {
      (cell as CodeCell).model.outputs.changed.connect(update);
    }
    cell.model.metadataChanged.connect(update);
    void cell.ready.then(update);
  }

  syncErrorActions(cell: Cell): void {
    const existing = cell.node.querySelector(`.${ACTIONS_CLASS}`);
    const error = this.enabled ? firstError(cell.model) : null;
    if (!error) {
      existing?.remove();
      return;
    }
    if (existing) {
      return;
    }
    const bar = document.createElement('div');
    bar.className = ACTIONS_CLASS;
    bar.append(this.button('Fix with goat', CommandIds.fix, cell), this.button('Explain', CommandIds.explain, cell));
    // Below the outputs (the output wrapper lays its children out in a row).
    const wrapper = cell.node.querySelector(':scope > .jp-Cell-outputWrapper');
    if (wrapper) {
      wrapper.insertAdjacentElement('afterend', bar);
    } else {
      cell.node.appendChild(bar);
    }
  }

  button(label: string, command: string, cell: Cell): HTMLButtonElement {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-mod-styled goat-error-action';
    button.textContent = label;
    button.title = this.app.commands.caption(command, { cellId: cell.model.id });
    button.addEventListener('click', event => {
      event.stopPropagation();
      void this.app.commands.execute(command, { cellId: cell.model.id });
    });
    return button;
  }
}

function watchPanel(actions: CellActions, panel: NotebookPanel): void {
  const seen = new WeakSet<Cell>();
  const scan = () => {
    for (const cell of panel.content.widgets) {
      if (!seen.has(cell)) {
        seen.add(cell);
        actions.watch(cell);
      }
    }
  };
  panel.content.model?.cells.changed.connect(scan);
  panel.context.ready.then(scan).catch(() => undefined);
  scan();
}

function refreshAll(actions: CellActions, tracker: INotebookTracker): void {
  tracker.forEach(panel => {
    for (const cell of panel.content.widgets) {
      actions.syncErrorActions(cell);
      cell.toggleClass(LOCK_CLASS, actions.enabled && isLocked(cell.model));
    }
  });
}

export const cellActionsPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Fix with goat, Explain, Ask goat about this cell, and Lock for goat.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    registry: ISettingRegistry | null,
    palette: ICommandPalette | null
  ): void => {
    const actions = new CellActions(app, tracker);
    actions.register();
    actions.registerConversations();
    // The palette shows each command's shortcut (G F, G E, G A, G L) beside it.
    Object.values(CommandIds).forEach(command => palette?.addItem({ command, category: PALETTE_CATEGORY }));
    tracker.forEach(panel => watchPanel(actions, panel));
    tracker.widgetAdded.connect((_sender, panel) => watchPanel(actions, panel));
    tracker.activeCellChanged.connect(() => app.commands.notifyCommandChanged(CommandIds.lock));
    if (registry) {
      void registry.load(PLUGIN_ID).then(settings => {
        const apply = () => {
          actions.enabled = settings.get('enabled').composite !== false;
          refreshAll(actions, tracker);
          Object.values(CommandIds).forEach(id => app.commands.notifyCommandChanged(id));
        };
        settings.changed.connect(apply);
        apply();
      });
    }
  }
};

const RESUME = '%goat resume';
const LOAD_GOAT = '%load_ext goat_jupyter';
const ASKED_LOADED = "'goat' in get_ipython().magics_manager.magics['line']";
const ASK_TIMEOUT_MS = 3000;

/** A user expression's answer in an execute reply. */
interface IExpression {
  status?: string;
  data?: Record<string, unknown>;
}

/** Whether the notebook's kernel has goat loaded (a silent question; false when it cannot say in
 * time: a busy kernel, none running), so `%goat resume` runs in a kernel where goat is not loaded. */
async function goatLoaded(panel: NotebookPanel): Promise<boolean> {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    return false;
  }
  const asked = kernel
    .requestExecute({ code: '', silent: true, store_history: false, user_expressions: { goat: ASKED_LOADED } })
    .done.then(reply => {
      const content = reply.content as { status: string; user_expressions?: Record<string, IExpression> };
      const answer = content.status === 'ok' ? content.user_expressions?.goat : undefined;
      return answer?.status === 'ok' && answer.data?.['text/plain'] === 'True';
    })
    .catch(() => false);
  const late = new Promise<boolean>(resolve => setTimeout(() => resolve(false), ASK_TIMEOUT_MS));
  return Promise.race([asked, late]);
}
