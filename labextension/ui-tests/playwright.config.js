/**
 * Playwright configuration for the Galata tests, using Debian's chromium (never a downloaded
 * browser). Run through `bash scripts/ui-tests`, which also starts nothing by hand: the
 * webServer block below starts and stops JupyterLab.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const port = process.env.GOAT_UI_TESTS_PORT || '8888';
// A second server where the goat-jupyter labextension is disabled (goat_agent.spec.ts).
const plainPort = process.env.GOAT_UI_TESTS_PLAIN_PORT || String(Number(port) + 1);
process.env.GOAT_UI_TESTS_PLAIN_PORT = plainPort;

module.exports = {
  ...baseConfig,
  reporter: [['list'], ['html', { open: 'never' }]],
  workers: 1,
  retries: 0,
  use: {
    ...baseConfig.use,
    baseURL: `http://localhost:${port}`,
    trace: 'off',
    video: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run'
      ]
    }
  },
  webServer: [
    {
      command: 'jlpm start',
      url: `http://localhost:${port}/lab`,
      timeout: 120 * 1000,
      reuseExistingServer: false,
      stdout: 'ignore',
      stderr: 'pipe'
    },
    {
      command: 'jlpm start',
      url: `http://localhost:${plainPort}/lab`,
      env: { GOAT_UI_TESTS_PORT: plainPort, GOAT_UI_TESTS_DISABLE_GOAT: '1' },
      timeout: 120 * 1000,
      reuseExistingServer: false,
      stdout: 'ignore',
      stderr: 'ignore'
    }
  ]
};
