/**
 * The config.yaml that `kaiawatch simulate` prints in its banner, as a user copies it: the
 * lines under "A config.yaml for it" up to the first note in parentheses. Throws when the
 * banner has none.
 */
export function configOfBanner(banner: string): string {
  const lines = banner.split("\n");
  const start = lines.findIndex((line) => line.startsWith("A config.yaml for it"));
  if (start === -1) throw new Error(`the simulator's banner holds no config:\n${banner}`);
  const end = lines.findIndex((line, i) => i > start && (line.trim() === "" || line.trimStart().startsWith("(")));
  return `${lines.slice(start + 1, end).join("\n")}\n`;
}
