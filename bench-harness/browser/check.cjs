// Opens the HTML report in headless Chromium (Debian's, driven by playwright-core) and checks
// what a person would see: the page loads with no console error, no failed and no outside
// request; every plot in the plot directory is on the page, visible and drawn at a readable
// size; every table (one per size, the floors, one per experiment) is visible with rows;
// sorting by a column sorts; the embedded font is the one the plots were laid out with; the
// page is no wider than a laptop screen. Saves a screenshot of the page's top.
//
// usage: node check.cjs <report dir> <screenshot.png>
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed += 1;
  } else {
    failed += 1;
    console.error("FAILED: " + what);
  }
}

// What the page must show, read from the files beside it (not from the page).
function expected(dir) {
  const stems = fs
    .readdirSync(path.join(dir, "plots"))
    .filter((f) => f.endsWith(".svg"))
    .map((f) => f.slice(0, -4))
    .sort();
  const results = JSON.parse(fs.readFileSync(path.join(dir, "results.json"), "utf8"));
  const tables = results.config.sizes.length + 1 + results.experiments.length;
  return { stems, tables };
}

async function checkPlots(page, stems) {
  const onPage = await page.$$eval("figure.plot", (fs) => fs.map((f) => f.dataset.stem));
  check(
    JSON.stringify([...onPage].sort()) === JSON.stringify(stems),
    "the page's figures " + JSON.stringify(onPage) + " are the plot files " + JSON.stringify(stems)
  );
  for (const stem of stems) {
    const svg = page.locator('figure.plot[data-stem="' + stem + '"] svg');
    await svg.scrollIntoViewIfNeeded();
    const box = await svg.boundingBox();
    check((await svg.isVisible()) && box !== null, stem + " is visible");
    check(box !== null && box.width >= 600 && box.height >= 300, stem + " is drawn at a readable size");
  }
}

async function checkTables(page, count) {
  const tables = page.locator("table.sortable");
  check((await tables.count()) === count, count + " tables on the page");
  for (let i = 0; i < (await tables.count()); i++) {
    const t = tables.nth(i);
    await t.scrollIntoViewIfNeeded();
    check(await t.isVisible(), "table " + i + " is visible");
    check((await t.locator("tbody tr").count()) > 0, "table " + i + " has rows");
  }
  // Sorting: click the first main table's bits/item heading; the column reads ascending.
  const first = tables.first();
  await first.locator("th", { hasText: "bits/item" }).click();
  const col = await first.locator("tbody tr").evaluateAll((rows) =>
    rows.map((r) => parseFloat(r.cells[2].dataset.sort))
  );
  check(col.every((v, i) => i === 0 || col[i - 1] <= v), "sorting by bits/item sorts");
}

async function main() {
  const [dir, shot] = process.argv.slice(2);
  const want = expected(dir);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "bloomlab-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
    viewport: { width: 1440, height: 900 },
  });
  const page = context.pages()[0] || (await context.newPage());
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push("console: " + m.text()));
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("requestfailed", (r) => problems.push("request failed: " + r.url()));
  page.on("request", (r) => {
    if (!/^(file|data):/.test(r.url())) problems.push("outside request: " + r.url());
  });
  await page.goto("file://" + path.resolve(dir, "index.html"), { waitUntil: "load" });
  await page.evaluate(() => document.fonts.ready);
  const embedded = await page.evaluate(() =>
    [...document.fonts].some((f) => f.family.replace(/"/g, "") === "DejaVu Sans" && f.status === "loaded")
  );
  check(embedded, "the embedded font is loaded");
  await checkPlots(page, want.stems);
  await checkTables(page, want.tables);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 1440, "the page fits a 1440-pixel screen (" + wide + ")");
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot, fullPage: true, clip: { x: 0, y: 0, width: 1440, height: 1500 } });
  check(problems.length === 0, "no console error or outside request: " + problems.join("; "));
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  console.log("screenshot: " + shot);
  console.log("browser: " + passed + " passed, " + failed + " failed");
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
