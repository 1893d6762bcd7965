/**
 * A small marker on cells whose state in the kernel no longer matches what the user sees: a cell
 * edited since it ran, and a cell run out of order (a cell below it ran before it). The kernel side
 * (goat's execution log) tells the model the same facts; here they are computed from what this page
 * saw run: the source at the moment a cell got its execution count (a Shift+Enter or goat's RunCell).
 */
import { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

const STALE_CLASS = 'goat-stale';

/** The source each cell had when it last ran, keyed by its model (only cells run in this page). */
const ranSources = new WeakMap<ICellModel, string>();

function codeModel(cell: Cell): ICodeCellModel | null {
  return cell.model.type === 'code' ? (cell.model as ICodeCellModel) : null;
}

function same(a: string, b: string): boolean {
  return a.trimEnd() === b.trimEnd();
}

/** What the marker says for one cell, or null when the cell matches what ran. */
function staleText(cells: readonly Cell[], index: number): string | null {
  const model = codeModel(cells[index]);
  const ran = model ? ranSources.get(model) : undefined;
  const count = model?.executionCount;
  if (!model || ran === undefined || count === null || count === undefined) {
    return null;
  }
  const parts: string[] = [];
  if (!same(ran, model.sharedModel.getSource())) {
    parts.push(`edited since it ran as [${count}]`);
  }
  const earlier = cells.slice(index + 1).find(other => {
    const below = codeModel(other);
    const belowCount = below?.executionCount;
    return below && ranSources.has(below) && typeof belowCount === 'number' && belowCount < count;
  });
  if (earlier) {
    parts.push(`ran out of order (a cell below ran before it, as [${codeModel(earlier)?.executionCount}])`);
  }
  return parts.length ? parts.join('; ') : null;
}

function showMarker(cell: Cell, text: string | null): void {
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
  marker.textContent = text.startsWith('edited') ? 'edited since run' : 'out of order';
  marker.title = `The kernel's state does not match this cell: ${text}. Re-run it to bring them back in line.`;
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
