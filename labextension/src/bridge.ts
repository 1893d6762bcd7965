/**
 * One notebook panel's end of the bridge: registers the `goat.notebook` comm target on the
 * panel's kernel connection (again whenever the kernel changes) and answers requests on
 * comms opened by cells this client ran.
 */
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { IChangedArgs } from '@jupyterlab/coreutils';
import { JSONValue } from '@lumino/coreutils';

import { IOpContext, OPERATIONS } from './ops';
import { COMM_TARGET, errorReply, okReply, Request, RequestError } from './protocol';

/** How many recent execute_request ids to remember for `running_cell`. */
const REMEMBERED_EXECUTIONS = 200;

export class PanelBridge {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _tracker: INotebookTracker,
    private readonly _appName: string
  ) {
    const sessionContext = _panel.sessionContext;
    sessionContext.kernelChanged.connect(this._onKernelChanged, this);
    this._attach(sessionContext.session?.kernel ?? null);
    _panel.disposed.connect(() => this._attach(null));
  }

  private _onKernelChanged(
    _sender: unknown,
    change: IChangedArgs<Kernel.IKernelConnection | null, Kernel.IKernelConnection | null, 'kernel'>
  ): void {
    this._attach(change.newValue);
  }

  /** Moves the comm target and the execution tracking to `kernel`. */
  private _attach(kernel: Kernel.IKernelConnection | null): void {
    if (this._kernel && !this._kernel.isDisposed) {
      this._kernel.removeCommTarget(COMM_TARGET, this._onCommOpen);
      this._kernel.anyMessage.disconnect(this._onAnyMessage, this);
    }
    this._kernel = kernel;
    this._cellIdByExecution.clear();
    this._adopted.clear();
    if (kernel) {
      kernel.registerCommTarget(COMM_TARGET, this._onCommOpen);
      kernel.anyMessage.connect(this._onAnyMessage, this);
    }
  }

  /** Answers for a run this tab picked up after a reload (live.ts), as if it had started it. */
  adopt(msgId: string, cellId: string): void {
    this._adopted.add(msgId);
    this._cellIdByExecution.set(msgId, cellId);
  }

  /** Keeps the comm only if this client sent (or adopted) the execute_request that opened it. */
  private readonly _onCommOpen = (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): void => {
    const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
    const ours = parent.session === this._kernel?.clientId || this._adopted.has(parent.msg_id ?? '');
    if (!this._kernel || !ours) {
      return; // another client ran the cell; it answers, and closing would break its comm
    }
    comm.onMsg = (message: KernelMessage.ICommMsgMsg) => {
      // Not returned: a pending promise would pause this connection's message processing.
      void this._answer(comm, message);
    };
  };

  /** Remembers which cell each execute_request this client sent belongs to. */
  private _onAnyMessage(_sender: Kernel.IKernelConnection, args: Kernel.IAnyMessageArgs): void {
    const { msg, direction } = args;
    if (direction !== 'send' || msg.header.msg_type !== 'execute_request') {
      return;
    }
    const cellId = (msg.metadata as { cellId?: unknown }).cellId;
    if (typeof cellId === 'string') {
      this._cellIdByExecution.set(msg.header.msg_id, cellId);
      if (this._cellIdByExecution.size > REMEMBERED_EXECUTIONS) {
        const oldest = this._cellIdByExecution.keys().next().value as string;
        this._cellIdByExecution.delete(oldest);
      }
    }
  }

  private async _answer(comm: Kernel.IComm, message: KernelMessage.ICommMsgMsg): Promise<void> {
    const request = message.content.data as Request;
    const id: JSONValue = request['id'] ?? null;
    const parent = message.parent_header as Partial<KernelMessage.IHeader>;
    let reply;
    try {
      reply = okReply(id, await this._run(request, parent.msg_id));
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      if (!(error instanceof RequestError)) {
        console.error(`goat-jupyter: '${String(request['op'])}' failed`, error);
      }
      reply = errorReply(id, text);
    }
    if (!comm.isDisposed) {
      comm.send(reply);
    }
  }

  private async _run(request: Request, parentMsgId: string | undefined) {
    const op = request['op'];
    const known = typeof op === 'string' && Object.prototype.hasOwnProperty.call(OPERATIONS, op);
    const operation = known ? OPERATIONS[op as string] : undefined;
    if (!operation) {
      throw new RequestError(
        `unknown op ${JSON.stringify(op ?? null)}; known: ${Object.keys(OPERATIONS).join(', ')}`
      );
    }
    const context: IOpContext = {
      tracker: this._tracker,
      owner: this._panel,
      appName: this._appName,
      requestingCellId: parentMsgId ? this._cellIdByExecution.get(parentMsgId) : undefined,
      requestMsgId: parentMsgId
    };
    return operation(request, context);
  }

  private _kernel: Kernel.IKernelConnection | null = null;
  private readonly _cellIdByExecution = new Map<string, string>();
  private readonly _adopted = new Set<string>();
}
