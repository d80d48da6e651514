// Opens the dev server's /docs page in Debian's chromium through
// playwright-core and prints what a reader sees, as JSON on stdout:
// {title, text, offOrigin}. offOrigin lists every request the page made to
// anything but the server's own origin (each is aborted). Run by
// cmd/devserver's TestTheDocsPageShowsTheReferenceInARealBrowser:
//   node docs-page.mjs <base-url> <chromium-path> <user-data-dir>
import { chromium } from 'playwright-core';

const [base, executablePath, userDataDir] = process.argv.slice(2);
const origin = new URL(base).origin;
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const offOrigin = [];
try {
  const page = context.pages()[0] ?? await context.newPage();
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) {
      return route.continue();
    }
    offOrigin.push(url);
    return route.abort();
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(base + '/docs', { waitUntil: 'load', timeout: 60000 });
  // Redoc renders the operations once it has loaded and parsed the document.
  await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60000 });
  const text = await page.evaluate(() => document.body.innerText);
  const title = await page.title();
  process.stdout.write(JSON.stringify({ title, text, offOrigin, errors }));
} finally {
  await context.close();
}
