/**
 * Citations in a goat answer (`[cell 7, out 1 ✓]`) are links `#goat-cite-<count>-<output>-<state>`
 * (goat_jupyter/ui/safe/cited.py). A click scrolls this notebook to that output, the code cell whose
 * `[7]:` prompt shows the count (the nearest one above the answer when a restart left two), and
 * highlights it briefly. The link works the same in a reloaded (untrusted) notebook.
 */
import { Cell, CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

const ANCHOR = /^#goat-cite-(\d+)-(\d+)-(ok|bad|ref)$/;
export const TARGET_CLASS = 'goat-cite-target';
const HIGHLIGHT_MS = 1600;

/** The count and 1-based output (0: the whole output area) a citation link names, or null. */
export function parseAnchor(href: string | null): { count: number; output: number } | null {
  const match = ANCHOR.exec(href ?? '');
  return match ? { count: Number(match[1]), output: Number(match[2]) } : null;
}

/** The code cell showing `count`: the nearest one above `from`, else the first below it. */
function citedCell(cells: readonly Cell[], count: number, from: number): CodeCell | null {
  const matching = cells
    .map((cell, index) => ({ cell, index }))
    .filter(({ cell }) => cell instanceof CodeCell && cell.model.executionCount === count);
  const above = matching.filter(({ index }) => index <= from);
  const chosen = above.length ? above[above.length - 1] : matching[0];
  return chosen ? (chosen.cell as CodeCell) : null;
}

function highlight(node: HTMLElement): void {
  node.classList.remove(TARGET_CLASS);
  void node.offsetWidth; // restart the animation on a second click
  node.classList.add(TARGET_CLASS);
  window.setTimeout(() => node.classList.remove(TARGET_CLASS), HIGHLIGHT_MS);
}

function outputNode(cell: CodeCell, output: number): HTMLElement {
  const shown: readonly Widget[] = cell.outputArea.widgets;
  const widget = output >= 1 && output <= shown.length ? shown[output - 1] : null;
  return widget ? widget.node : cell.outputArea.node;
}

/** Follow one citation link clicked in `panel`; false when it names no cell here. */
function follow(panel: NotebookPanel, anchor: HTMLAnchorElement): boolean {
  const cited = parseAnchor(anchor.getAttribute('href'));
  if (!cited) {
    return false;
  }
  const cells = panel.content.widgets;
  const from = cells.findIndex(cell => cell.node.contains(anchor));
  const cell = citedCell(cells, cited.count, from < 0 ? cells.length : from);
  if (!cell) {
    return false;
  }
  const target = outputNode(cell, cited.output);
  void panel.content.scrollToItem(cells.indexOf(cell), 'smart').then(() => {
    target.scrollIntoView({ block: 'center', behavior: 'auto' });
    highlight(target);
  });
  return true;
}

/** Handle citation links in this panel's outputs before JupyterLab's own anchor handling does. */
export function followCitations(panel: NotebookPanel): void {
  panel.node.addEventListener(
    'click',
    event => {
      const anchor = (event.target as HTMLElement | null)?.closest?.('a');
      if (!anchor || !parseAnchor(anchor.getAttribute('href'))) {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
      follow(panel, anchor as HTMLAnchorElement);
    },
    true
  );
}
