/**
 * Opening a notebook is not an edit. JupyterLab writes the kernel's full `language_info` (Python
 * version, lexer, ...) into a notebook's metadata when the kernel connects, which marks a notebook
 * saved with a shorter one (the examples, anything written by a script) as modified the moment it
 * opens. That one change, made while the notebook was clean, leaves it clean.
 */
import { NotebookPanel } from '@jupyterlab/notebook';

/** How close (ms) the dirty flag's flip must follow the language_info change to be its effect. */
const SAME_CHANGE_MS = 50;

export function keepCleanOnLanguageInfo(panel: NotebookPanel): void {
  void panel.context.ready.then(() => {
    const state = panel.context.model;
    const notebook = panel.content.model;
    if (!notebook) {
      return;
    }
    let becameDirty = -Infinity;
    state.stateChanged.connect((_sender, change) => {
      if (change.name === 'dirty' && change.oldValue === false && change.newValue === true) {
        becameDirty = performance.now();
      }
    });
    notebook.metadataChanged.connect((_sender, change) => {
      if (change.key !== 'language_info') {
        return;
      }
      const changedAt = performance.now();
      // The flag flips in the same synchronous change, before or after this signal.
      queueMicrotask(() => {
        if (state.dirty && Math.abs(becameDirty - changedAt) < SAME_CHANGE_MS) {
          state.dirty = false;
        }
      });
    });
  });
}
