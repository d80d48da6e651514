// Opens the dev server's /docs page in Debian's chromium through
// playwright-core and prints what a reader sees, as JSON on stdout:
// {title, text, menu, offOrigin, errors, deep}. menu is the side menu's text
// (its sections and groups); offOrigin lists every request the page made to
// anything but the server's own origin (each is aborted); deep is what a
// fresh page opened at /docs#<deep-link> shows: whether the section the link
// names is rendered, and where it sits in the window. Run by cmd/devserver's
// TestTheDocsPageShowsTheReferenceInARealBrowser:
//   node docs-page.mjs <base-url> <chromium-path> <user-data-dir> <deep-link>
import { chromium } from 'playwright-core';

const [base, executablePath, userDataDir, deepLink] = process.argv.slice(2);
const origin = new URL(base).origin;
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const offOrigin = [];
try {
  const errors = [];
  // Every page keeps to the server's origin and reports its script errors.
  const watch = async (p) => {
    await p.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) {
        return route.continue();
      }
      offOrigin.push(url);
      return route.abort();
    });
    p.on('pageerror', (e) => errors.push(String(e)));
    return p;
  };
  const page = await watch(context.pages()[0] ?? await context.newPage());
  await page.goto(base + '/docs', { waitUntil: 'load', timeout: 60000 });
  // Redoc renders the operations once it has loaded and parsed the document.
  await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60000 });
  const text = await page.evaluate(() => document.body.innerText);
  const menu = await page.evaluate(() => document.querySelector('.menu-content')?.innerText ?? '');
  const title = await page.title();

  // A deep link opened in a new page, as from a bookmark or a chat message.
  const linked = await watch(await context.newPage());
  await linked.goto(base + '/docs#' + deepLink, { waitUntil: 'load', timeout: 60000 });
  const selector = `[data-section-id="${deepLink}"]`;
  const deep = { found: false, top: null, height: null, hash: null };
  try {
    await linked.waitForSelector(selector, { timeout: 60000 });
    deep.found = true;
    // Redoc scrolls to the linked section once it has rendered it.
    await linked.waitForFunction((sel) => {
      const r = document.querySelector(sel).getBoundingClientRect();
      return r.top >= -2 && r.top < window.innerHeight / 2;
    }, selector, { timeout: 30000 }).catch(() => {});
    Object.assign(deep, await linked.evaluate((sel) => ({
      top: document.querySelector(sel).getBoundingClientRect().top,
      height: window.innerHeight,
      hash: location.hash,
    }), selector));
  } catch (e) {
    errors.push('deep link: ' + String(e));
  }
  process.stdout.write(JSON.stringify({ title, text, menu, offOrigin, errors, deep }));
} finally {
  await context.close();
}
