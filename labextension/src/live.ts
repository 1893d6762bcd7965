/**
 * A `%%goat` cell that was running when this tab (re)loaded: its output keeps coming, addressed to
 * an execute request this tab never sent, so JupyterLab would drop it and an open approval would be
 * lost. On connecting to a kernel, ask `goat.live` what is running; show the run's outputs so far as
 * the kernel sent them (the saved ones lag behind by up to an autosave), route that request's later
 * output into its cell, show the open prompts' widgets again (their state comes from the kernel)
 * and let the bridge answer the run's notebook requests. The cell is then what it would be had this
 * tab run it: cleared, trusted, running. So the prompts' buttons show whether or not JupyterLab
 * trusts the notebook (widget views never render in an untrusted cell's outputs).
 */
import * as nbformat from '@jupyterlab/nbformat';
import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { JSONObject } from '@lumino/coreutils';

import { restoreMarks } from './approval_mark';
import { WIDGET_MIME } from './goat_outputs';

export const LIVE_TARGET = 'goat.live';

export interface ILivePrompt {
  model_id: string;
  display_id: string;
  text: string;
  mark?: JSONObject | null; // what the prompt shows at its cell (approval_mark.ts); older kernels: absent
}

/** One output the run showed so far, and the display id its later updates address. */
export interface ILiveOutput {
  output: nbformat.IOutput;
  display_id: string | null;
}

export interface ILiveRun {
  msg_id: string;
  cell_id: string | null;
  execution_count: number;
  prompts: ILivePrompt[];
  outputs?: ILiveOutput[]; // absent from a kernel with an older goat: the saved outputs stay
}

/** Who else must know about an adopted run (the bridge answers its requests). */
export type AdoptListener = (msgId: string, cellId: string) => void;

/** Asks the kernel once per connection; adopts the runs whose cell is in this notebook. */
export class LiveRuns {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _onAdopt: AdoptListener
  ) {
    _panel.sessionContext.kernelChanged.connect((_sender, change) => this._attach(change.newValue), this);
    void _panel.context.ready.then(() => this._attach(_panel.sessionContext.session?.kernel ?? null));
  }

  private _attach(kernel: Kernel.IKernelConnection | null): void {
    this._adopted.forEach(run => run.dispose());
    this._adopted.clear();
    if (!kernel || this._asked.has(kernel.id)) {
      return;
    }
    this._asked.add(kernel.id);
    void this._ask(kernel);
  }

  private async _ask(kernel: Kernel.IKernelConnection): Promise<void> {
    await this._panel.context.ready;
    if (kernel.isDisposed) {
      return;
    }
    const comm = kernel.createComm(LIVE_TARGET);
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
      const runs = (msg.content.data as unknown as { runs?: ILiveRun[] }).runs ?? [];
      runs.forEach(run => this._adopt(kernel, run));
    };
    // Not awaited: a comm_open gets no reply. A kernel without goat closes the comm at once.
    comm.open({});
  }

  private _adopt(kernel: Kernel.IKernelConnection, run: ILiveRun): void {
    const cell = this._codeCell(run.cell_id);
    // A cell this tab is running gets its output already.
    if (!cell || !run.cell_id || cell.executionState === 'running' || this._adopted.has(run.msg_id)) {
      return;
    }
    this._adopted.set(run.msg_id, new AdoptedRun(kernel, cell, run));
    this._onAdopt(run.msg_id, run.cell_id);
    restoreMarks(this._panel, run.prompts.map(prompt => prompt.mark), run.msg_id);
  }

  private _codeCell(cellId: string | null): ICodeCellModel | undefined {
    const cells = this._panel.content.model?.cells;
    if (!cells || !cellId) {
      return undefined;
    }
    for (let index = 0; index < cells.length; index++) {
      const cell = cells.get(index);
      if (cell.id === cellId && cell.type === 'code') {
        return cell as ICodeCellModel;
      }
    }
    return undefined;
  }

  private readonly _asked = new Set<string>();
  private readonly _adopted = new Map<string, AdoptedRun>();
}

/** One running execute request's output, routed into its cell as JupyterLab's output area would. */
class AdoptedRun {
  constructor(
    private readonly _kernel: Kernel.IKernelConnection,
    private readonly _cell: ICodeCellModel,
    run: ILiveRun
  ) {
    this._msgId = run.msg_id;
    if (run.outputs) {
      // As JupyterLab does when it runs a cell: clear first, then trust what the kernel sends.
      _cell.outputs.clear();
      _cell.trusted = true;
      run.outputs.forEach(shown => this._show(shown.output, shown.display_id));
    }
    _cell.executionCount = run.execution_count;
    _cell.executionState = 'running';
    run.prompts.filter(prompt => !this._displays.has(prompt.display_id)).forEach(prompt => this._restorePrompt(prompt));
    _kernel.iopubMessage.connect(this._onIOPub, this);
  }

  dispose(): void {
    this._kernel.iopubMessage.disconnect(this._onIOPub, this);
  }

  /** The prompt's widget where its (saved, widget-less) output is, or at the end. */
  private _restorePrompt(prompt: ILivePrompt): void {
    const output: nbformat.IOutput = {
      output_type: 'display_data',
      data: {
        [WIDGET_MIME]: { model_id: prompt.model_id, version_major: 2, version_minor: 1 },
        'text/plain': prompt.text
      },
      metadata: { goat: { widget: 'prompt', model: prompt.model_id } }
    };
    const outputs = this._cell.outputs;
    let index = -1;
    for (let i = 0; i < outputs.length; i++) {
      const goat = (outputs.get(i).metadata as JSONObject)['goat'] as JSONObject | undefined;
      if (goat?.['model'] === prompt.model_id) {
        index = i;
      }
    }
    if (index >= 0) {
      outputs.set(index, output);
    } else {
      index = outputs.add(output) - 1; // add returns the new length
    }
    this._displays.set(prompt.display_id, [index]);
  }

  private _onIOPub(_sender: Kernel.IKernelConnection, msg: KernelMessage.IIOPubMessage): void {
    const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
    if (parent.msg_id !== this._msgId) {
      return;
    }
    const content = msg.content as JSONObject;
    const kind = msg.header.msg_type;
    if (kind === 'status' && content['execution_state'] === 'idle') {
      this._cell.executionState = 'idle';
      this.dispose();
    } else if (kind === 'clear_output') {
      this._cell.outputs.clear(Boolean(content['wait']));
      this._displays.clear();
    } else if (kind === 'update_display_data') {
      this._update(content);
    } else if (['stream', 'display_data', 'execute_result', 'error'].includes(kind)) {
      this._add(kind, content);
    }
  }

  private _add(kind: string, content: JSONObject): void {
    const output = { ...content, output_type: kind } as unknown as nbformat.IOutput;
    delete (output as JSONObject)['transient'];
    const displayId = (content['transient'] as JSONObject | undefined)?.['display_id'];
    this._show(output, typeof displayId === 'string' ? displayId : null);
  }

  private _show(output: nbformat.IOutput, displayId: string | null): void {
    const index = this._cell.outputs.add(output) - 1; // the new length; streams merge into the last
    if (displayId !== null) {
      this._displays.set(displayId, [...(this._displays.get(displayId) ?? []), index]);
    }
  }

  private _update(content: JSONObject): void {
    const displayId = (content['transient'] as JSONObject | undefined)?.['display_id'];
    const indices = typeof displayId === 'string' ? this._displays.get(displayId) : undefined;
    const output = {
      output_type: 'display_data',
      data: content['data'],
      metadata: content['metadata'] ?? {}
    } as nbformat.IOutput;
    (indices ?? []).forEach(index => this._cell.outputs.set(index, output));
  }

  private readonly _msgId: string;
  private readonly _displays = new Map<string, number[]>();
}
