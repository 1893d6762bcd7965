/**
 * A cell run by goat's RunCell, shown as JupyterLab shows its own executions: `run_started` clears
 * the cell and shows [*]; the kernel then publishes the cell's outputs on IOPub as replies to the
 * run's own id (the %%goat cell keeps the shell channel busy, so the code cannot be sent as an
 * execute request), and they are routed into the cell as they come; `run_finished` sets the final
 * outputs and execution count. The [*] also ends when the %%goat cell or the kernel does.
 */
import * as nbformat from '@jupyterlab/nbformat';
import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { JSONObject } from '@lumino/coreutils';

import { asCodeCell, findCell, notebookModel } from './cells';
import { Request, RequestError, requiredString } from './protocol';

const OUTPUT_KINDS = ['stream', 'display_data', 'execute_result', 'error'];
const GONE: ReadonlyArray<Kernel.Status> = ['restarting', 'autorestarting', 'dead'];

/** The runs being routed now, by run id. */
const RUNS = new Map<string, RoutedRun>();

/** One run's IOPub output, routed into its cell until the run, its %%goat cell or the kernel ends. */
class RoutedRun {
  constructor(
    private readonly _kernel: Kernel.IKernelConnection,
    readonly cell: ICodeCellModel,
    private readonly _runId: string,
    private readonly _ownerMsgId: string | undefined
  ) {
    _kernel.iopubMessage.connect(this._onIOPub, this);
    _kernel.statusChanged.connect(this._onStatus, this);
  }

  end(): void {
    this._kernel.iopubMessage.disconnect(this._onIOPub, this);
    this._kernel.statusChanged.disconnect(this._onStatus, this);
    RUNS.delete(this._runId);
    if (this.cell.executionState === 'running') {
      this.cell.executionState = 'idle';
    }
  }

  private _onStatus(_sender: Kernel.IKernelConnection, status: Kernel.Status): void {
    if (GONE.includes(status)) {
      this.end();
    }
  }

  private _onIOPub(_sender: Kernel.IKernelConnection, msg: KernelMessage.IIOPubMessage): void {
    const parent = (msg.parent_header as Partial<KernelMessage.IHeader>).msg_id;
    const content = msg.content as JSONObject;
    const kind = msg.header.msg_type;
    if (parent === this._ownerMsgId && kind === 'status' && content['execution_state'] === 'idle') {
      this.end(); // the %%goat cell ended (a Stop whose final write did not arrive)
    } else if (parent !== this._runId) {
      return;
    } else if (kind === 'clear_output') {
      this.cell.outputs.clear(Boolean(content['wait']));
      this._displays.clear();
    } else if (kind === 'update_display_data') {
      this._update(content);
    } else if (OUTPUT_KINDS.includes(kind)) {
      this._add(kind, content);
    }
  }

  private _add(kind: string, content: JSONObject): void {
    const output = { ...content, output_type: kind } as JSONObject;
    delete output['transient'];
    const index = this.cell.outputs.add(output as unknown as nbformat.IOutput) - 1; // the new length
    const displayId = (content['transient'] as JSONObject | undefined)?.['display_id'];
    if (typeof displayId === 'string') {
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
    (indices ?? []).forEach(index => this.cell.outputs.set(index, output));
  }

  private readonly _displays = new Map<string, number[]>();
}

/**
 * `run_started {cell_id, run_id}`: the cell loses its outputs and count and shows [*]; IOPub
 * messages whose parent is `run_id` go into it. `ownerMsgId` is the %%goat cell's request.
 */
export function runStarted(
  panel: NotebookPanel,
  kernel: Kernel.IKernelConnection | null | undefined,
  request: Request,
  ownerMsgId: string | undefined
): JSONObject {
  const cell = asCodeCell(findCell(panel, requiredString(request, 'cell_id')));
  const runId = requiredString(request, 'run_id');
  if (!kernel) {
    throw new RequestError('the notebook has no kernel connection');
  }
  RUNS.forEach(run => run.cell === cell && run.end());
  // Not clearExecution(): that also marks the cell trusted, which is the user's call, not goat's.
  notebookModel(panel).sharedModel.transact(() => {
    cell.outputs.clear();
    cell.executionCount = null;
  });
  cell.executionState = 'running';
  RUNS.set(runId, new RoutedRun(kernel, cell, runId, ownerMsgId));
  return {};
}

/** `run_finished {cell_id, run_id, outputs, execution_count}`: the final outputs and count, no [*]. */
export function runFinished(panel: NotebookPanel, request: Request): JSONObject {
  const cell = asCodeCell(findCell(panel, requiredString(request, 'cell_id')));
  const outputs = request['outputs'];
  const count = request['execution_count'];
  if (!Array.isArray(outputs)) {
    throw new RequestError("'outputs' must be a list of nbformat outputs");
  }
  if (typeof count !== 'number') {
    throw new RequestError("'execution_count' must be a number");
  }
  RUNS.get(requiredString(request, 'run_id'))?.end();
  // Through the output model, as JupyterLab's own execution writes outputs (it keeps the shared
  // model in step; replacing the shared model's outputs under routed stream outputs lost them).
  cell.outputs.clear();
  (outputs as unknown as nbformat.IOutput[]).forEach(output => cell.outputs.add(output));
  cell.executionCount = count;
  cell.executionState = 'idle';
  return {};
}
