/**
 * This page's end of goat's MCP server (goat_jupyter/mcp_server): while the server has MCP turned
 * on, the page keeps a websocket to /goat/mcp/tab open and answers the same requests the kernel
 * sends on the `goat.notebook` comm (ops.ts), by notebook path; `mcp_approval` asks the user, in the
 * notebook at the target cell, whether an outside agent may do what it asked. Only this page
 * answers approvals: no MCP tool can.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { JSONObject, JSONValue } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

import { findCell, findPanel } from './cells';
import { IOpContext, OPERATIONS } from './ops';
import { errorReply, okReply, Request, RequestError } from './protocol';
import { VERSION } from './version';

const RETRY_MS = 15000;

/** What the server shows about an approval (goat_jupyter/mcp_server/approvals.py `_shown`). */
interface IApproval {
  client: string;
  tool: string;
  title: string;
  reason: string;
  path: string;
  cell_id: string;
  preview: string;
  edit_mode: string;
  allow_session: boolean;
}

class McpTab {
  constructor(
    private readonly _tracker: INotebookTracker,
    private readonly _appName: string
  ) {}

  /** Connects while the server serves MCP; checks again every RETRY_MS otherwise. */
  async start(): Promise<void> {
    if (this._socket || (await this._serving()) !== true) {
      setTimeout(() => void this.start(), RETRY_MS);
      return;
    }
    const settings = ServerConnection.makeSettings();
    let url = URLExt.join(settings.wsUrl, 'goat', 'mcp', 'tab');
    const token = settings.token || PageConfig.getToken();
    if (token) {
      url += `?token=${encodeURIComponent(token)}`;
    }
    const socket = new WebSocket(url);
    this._socket = socket;
    socket.onmessage = event => void this._answer(socket, String(event.data));
    socket.onclose = () => {
      this._socket = null;
      setTimeout(() => void this.start(), RETRY_MS);
    };
  }

  private async _serving(): Promise<boolean> {
    try {
      const settings = ServerConnection.makeSettings();
      const url = URLExt.join(settings.baseUrl, 'goat', 'mcp', 'status');
      const response = await ServerConnection.makeRequest(url, {}, settings);
      return response.ok && ((await response.json()) as { enabled?: boolean }).enabled === true;
    } catch {
      return false;
    }
  }

  private async _answer(socket: WebSocket, text: string): Promise<void> {
    let request: Request;
    try {
      request = JSON.parse(text) as Request;
    } catch {
      return;
    }
    const id: JSONValue = request['id'] ?? null;
    let reply: JSONObject;
    try {
      reply = okReply(id, await this._run(request));
    } catch (error) {
      reply = errorReply(id, error instanceof Error ? error.message : String(error));
    }
    if (socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(reply));
    }
  }

  private async _run(request: Request): Promise<JSONObject> {
    const op = request['op'];
    if (op === 'hello') {
      return {
        path: '',
        server_root: PageConfig.getOption('serverRoot') || null,
        client: 'jupyterlab',
        app: this._appName,
        version: VERSION
      };
    }
    if (op === 'mcp_approval') {
      return { choice: await this._approve(request as unknown as IApproval) };
    }
    const known = typeof op === 'string' && Object.prototype.hasOwnProperty.call(OPERATIONS, op);
    const owner = this._tracker.currentWidget ?? this._first();
    if (!known || !owner) {
      throw new RequestError(known ? 'no notebook is open in this JupyterLab' : `unknown op ${String(op)}`);
    }
    const context: IOpContext = {
      tracker: this._tracker,
      owner,
      appName: this._appName,
      requestingCellId: undefined
    };
    return OPERATIONS[op as string](request, context);
  }

  private _first(): NotebookPanel | null {
    let found: NotebookPanel | null = null;
    this._tracker.forEach(panel => {
      found = found ?? panel;
    });
    return found;
  }

  /** The prompt, at the target cell: which agent, what it wants, the change; its answer. */
  private async _approve(ask: IApproval): Promise<string> {
    const panel = ask.path ? this._panelFor(ask.path) : undefined;
    if (panel && ask.cell_id) {
      this._reveal(panel, ask.cell_id);
    }
    const buttons = [
      Dialog.cancelButton({ label: 'Deny', className: 'goat-mcp-deny' }),
      ...(ask.allow_session
        ? [Dialog.okButton({ label: 'Allow for session', className: 'goat-mcp-session', actions: ['session'] })]
        : []),
      Dialog.okButton({ label: 'Allow once', className: 'goat-mcp-once' })
    ];
    const result = await showDialog({
      title: `${ask.client} asks: ${ask.title}`,
      body: new ApprovalBody(ask),
      buttons,
      defaultButton: 0,
      hasClose: false
    });
    if (!result.button.accept) {
      return 'deny';
    }
    return result.button.actions.includes('session') ? 'allow_session' : 'allow_once';
  }

  private _panelFor(path: string): NotebookPanel | undefined {
    const serverRoot = PageConfig.getOption('serverRoot');
    let relative = path;
    if (serverRoot && path.startsWith(serverRoot)) {
      relative = path.slice(serverRoot.length).replace(/^\/+/, '');
    }
    return findPanel(this._tracker, relative);
  }

  private _reveal(panel: NotebookPanel, cellId: string): void {
    try {
      const located = findCell(panel, cellId);
      const widget = panel.content.widgets[located.index];
      panel.content.activeCellIndex = located.index;
      if (widget) {
        void panel.content.scrollToCell(widget, 'center');
      }
    } catch {
      // a cell id the notebook no longer has: the dialog still names it
    }
  }

  private _socket: WebSocket | null = null;
}

/** The approval's text: the client, the reason, the target and the proposed source. */
class ApprovalBody extends Widget {
  constructor(ask: IApproval) {
    super();
    this.addClass('goat-mcp-approval');
    const lines = [`${ask.client} is an agent outside this notebook, connected over MCP.`, ask.reason];
    for (const line of lines.filter(Boolean)) {
      const paragraph = document.createElement('p');
      paragraph.textContent = line;
      this.node.appendChild(paragraph);
    }
    if (ask.preview) {
      const pre = document.createElement('pre');
      pre.className = 'goat-mcp-preview';
      pre.textContent = ask.edit_mode ? `${ask.edit_mode}:\n${ask.preview}` : ask.preview;
      this.node.appendChild(pre);
    }
  }
}

export const mcpTabPlugin: JupyterFrontEndPlugin<void> = {
  id: 'goat-jupyter:mcp-tab',
  description: "Answers goat's MCP server for this page: live notebook operations and approvals.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    void new McpTab(tracker, app.name).start();
  }
};
