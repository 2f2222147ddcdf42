import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every relative link and #anchor of README.md and docs/*.md leads somewhere: the file exists
 * (relative to the page that links it, as GitHub resolves it) and the anchor is a heading of
 * the page it names, slugged as GitHub slugs it. The README was cut into docs/ pages; a link
 * left pointing at a section that moved would otherwise be found by a reader, not by a test.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * GitHub's heading anchor (github-slugger): the heading's text as shown (inline code keeps its
 * text, a link its label, emphasis markers go), lowercased, every character that is not a
 * letter, mark, number, connector (`_`), space or hyphen removed, each space a hyphen.
 * Repeated headings get `-1`, `-2`, … in order.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Lines outside fenced code blocks (``` or ~~~), with their 1-based numbers. */
function proseLines(markdown: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  let fence: string | null = null;
  markdown.split("\n").forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker[0]!;
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line, number: index + 1 });
  });
  return out;
}

/** The anchors a page offers: its headings' slugs (duplicates numbered) and explicit `id`/`name` attributes. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = githubSlug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

/** Inline links and images of a page's prose, inline code spans left out (`[x](url)` there is text). */
export function linksOf(markdown: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  for (const { line, number } of proseLines(markdown)) {
    const prose = line.replace(/(`+)[\s\S]*?\1/g, "");
    for (const match of prose.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: match[1]!, line: number });
  }
  return links;
}

const pages = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

/** What is wrong with each relative link of a page, as `page:line target: why`. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  const text = readFileSync(join(repoRoot, page), "utf8");
  for (const { target, line } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …: not ours to check here
    const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
    const file = pathPart === "" ? join(repoRoot, page) : resolve(dirname(join(repoRoot, page)), decodeURIComponent(pathPart));
    const where = `${page}:${line} ${target}`;
    if (!file.startsWith(repoRoot)) {
      broken.push(`${where}: leaves the repository`);
      continue;
    }
    if (!existsSync(file)) {
      broken.push(`${where}: ${relative(repoRoot, file)} does not exist`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(file).isDirectory() || !file.endsWith(".md")) {
      broken.push(`${where}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!anchorsOf(readFileSync(file, "utf8")).has(anchor)) broken.push(`${where}: no heading of ${relative(repoRoot, file)} has the anchor #${anchor}`);
  }
  return broken;
}

describe("links of README.md and docs/", () => {
  it("slugs headings as GitHub does", () => {
    expect(githubSlug("Counting against total_count")).toBe("counting-against-total_count");
    expect(githubSlug("Alerts at the block: `schedule: head`")).toBe("alerts-at-the-block-schedule-head");
    expect(githubSlug("Credits: `kaiawatch plan` and the daily budget")).toBe("credits-kaiawatch-plan-and-the-daily-budget");
    expect(githubSlug("Install from a checkout — no registry")).toBe("install-from-a-checkout--no-registry");
    expect(githubSlug("[The store](docs/store.md) and *replicas*")).toBe("the-store-and-replicas");
    expect([...anchorsOf("# A\n## A\n```\n# B\n```\n")]).toEqual(["a", "a-1"]);
    expect(linksOf("see [x](y.md) and `[z](w.md)`\n```\n[q](r.md)\n```").map((link) => link.target)).toEqual(["y.md"]);
  });

  it.each(pages)("%s: every relative link and anchor leads somewhere", (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it("links every docs/ page from the README", () => {
    const linked = new Set(linksOf(readFileSync(join(repoRoot, "README.md"), "utf8")).map((link) => link.target.split("#")[0]));
    expect(pages.filter((page) => page.startsWith("docs/") && !linked.has(page))).toEqual([]);
  });
});
