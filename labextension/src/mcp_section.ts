/**
 * "Outside agents (MCP)" in the settings panel: serve this JupyterLab's notebooks to Claude Code,
 * Codex or VS Code over MCP (off by default; the user's own settings file, never a project's), the
 * connect command for each client with this server's token, and the clients connected with their
 * recent calls. The managed policy can forbid it; the panel then says so.
 */
import { call, element, section } from './panel_util';

interface IMcpClient {
  client: string;
  calls: number;
  recent: string[];
}

interface IMcpStatus {
  enabled: boolean;
  reason: string;
  url: string;
  commands: Record<string, string>;
  clients: IMcpClient[];
  page_connected: boolean;
}

const CLIENTS: [string, string][] = [
  ['claude_code', 'Claude Code (run in a terminal)'],
  ['codex', 'Codex (~/.codex/config.toml)'],
  ['vscode', 'VS Code (.vscode/mcp.json)']
];

export class McpSection {
  readonly node: HTMLElement;
  private enabled = element('input', { type: 'checkbox', 'data-goat': 'mcp-serve' });
  private reason = element('div', { class: 'goat-settings-hint', 'data-goat': 'mcp-serve-reason' });
  private commands = element('div', { 'data-goat': 'mcp-serve-commands' });
  private clients = element('ul', { 'data-goat': 'mcp-serve-clients' });

  constructor() {
    this.enabled.addEventListener('change', () => void this.send(this.enabled.checked));
    const label = element('label', { class: 'goat-settings-check' });
    label.append(this.enabled, element('span', {}, "Serve this JupyterLab's notebooks to outside agents over MCP"));
    const hint = element(
      'div',
      { class: 'goat-settings-hint' },
      'Outside agents then read, edit and run cells through goat, under your permission rules and cell ' +
        'locks; what asks shows a prompt here. Anyone with the token below can use this server.'
    );
    this.node = section('Outside agents (MCP)', hint, label, this.reason, this.commands, this.clients);
  }

  async load(): Promise<void> {
    const reply = await call<IMcpStatus>('mcp/status');
    if (reply.ok) {
      this.show(reply.body);
    }
  }

  private async send(enabled: boolean): Promise<void> {
    const reply = await call<IMcpStatus>('mcp/status', 'PUT', { enabled });
    if (reply.ok) {
      this.show(reply.body);
    } else {
      this.reason.textContent = `Not changed (HTTP ${reply.status}).`;
      await this.load();
    }
  }

  private show(status: IMcpStatus): void {
    this.enabled.checked = status.enabled;
    this.reason.textContent = status.enabled ? `On: ${status.reason}.` : `Off: ${status.reason.replace(/^off: /, '')}.`;
    this.commands.replaceChildren(
      ...CLIENTS.filter(([key]) => status.commands[key]).flatMap(([key, title]) => [
        element('h4', {}, title),
        element('pre', { class: 'goat-settings-command', 'data-goat': `mcp-command-${key}` }, status.commands[key])
      ])
    );
    this.clients.replaceChildren(
      ...status.clients.map(client =>
        element('li', {}, `${client.client}: ${client.calls} calls (${client.recent.slice(-5).join(', ')})`)
      )
    );
  }
}
