/**
 * goat's widget outputs (approval prompts, the "Revert this run" button) carry text/html and
 * text/plain fallbacks and `metadata.goat.widget`. Their kernel-side models live only as long as
 * the kernel that showed them, so a notebook opened from disk shows the fallback instead of
 * "Error displaying widget: model not found"; a finished revert replaces its button with a record.
 */
import * as nbformat from '@jupyterlab/nbformat';
import { NotebookPanel } from '@jupyterlab/notebook';
import { JSONObject } from '@lumino/coreutils';

export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';

interface IGoatMarker {
  widget?: string;
  key?: string;
}

function marker(output: nbformat.IOutput): IGoatMarker | undefined {
  const metadata = output.metadata as JSONObject | undefined;
  const goat = metadata?.['goat'];
  return goat && typeof goat === 'object' && !Array.isArray(goat) ? (goat as IGoatMarker) : undefined;
}

/** The output without its widget view, when goat marked it and it has a fallback to show. */
export function withoutWidget(output: nbformat.IOutput): nbformat.IOutput | undefined {
  const data = output.data as nbformat.IMimeBundle | undefined;
  if (!marker(output)?.widget || !data || !(WIDGET_MIME in data)) {
    return undefined;
  }
  const rest: nbformat.IMimeBundle = { ...data };
  delete rest[WIDGET_MIME];
  return Object.keys(rest).length ? { ...output, data: rest } : undefined;
}

/**
 * Drops goat's widget views from every code cell of a notebook just loaded from disk. How the
 * loaded file is shown is not an edit: a notebook that was clean stays clean.
 */
export function dropStaleWidgets(panel: NotebookPanel): void {
  const model = panel.content.model;
  if (!model) {
    return;
  }
  const wasClean = !panel.context.model.dirty;
  model.sharedModel.transact(() => {
    for (let index = 0; index < model.cells.length; index++) {
      const shared = model.cells.get(index).sharedModel;
      if (shared.cell_type !== 'code') {
        continue;
      }
      const code = shared as unknown as {
        getOutputs(): nbformat.IOutput[];
        setOutputs(outputs: nbformat.IOutput[]): void;
      };
      const outputs = code.getOutputs();
      const cleaned = outputs.map(output => withoutWidget(output) ?? output);
      if (cleaned.some((output, i) => output !== outputs[i])) {
        code.setOutputs(cleaned);
      }
    }
  }, false);
  if (wasClean) {
    panel.context.model.dirty = false;
  }
}

/** Replaces the goat output tagged `key` in `outputs` with a display of `data`; undefined if none. */
export function replaceTagged(
  outputs: nbformat.IOutput[],
  key: string,
  data: nbformat.IMimeBundle
): nbformat.IOutput[] | undefined {
  const index = outputs.findIndex(output => marker(output)?.key === key);
  if (index < 0) {
    return undefined;
  }
  const record: nbformat.IOutput = {
    output_type: 'display_data',
    data,
    metadata: { goat: { record: key } }
  };
  return [...outputs.slice(0, index), record, ...outputs.slice(index + 1)];
}
