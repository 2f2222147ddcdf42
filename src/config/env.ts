export interface EnvProblem {
  /** Offset in the scalar's text of the `${` that failed. */
  index: number;
  message: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces `${VAR}` and `${VAR:-default}` with values from `env`, as a shell would:
 * the default applies when VAR is unset or empty. `$${` writes a literal `${`. An unset
 * variable without a default, or a malformed reference, becomes a problem instead of text.
 */
export function expandEnv(text: string, env: NodeJS.ProcessEnv): { value: string; problems: EnvProblem[] } {
  const problems: EnvProblem[] = [];
  let out = "";
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf("$", i);
    if (dollar === -1) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, dollar);
    if (text.startsWith("$${", dollar)) {
      out += "${";
      i = dollar + 3;
      continue;
    }
    if (!text.startsWith("${", dollar)) {
      out += "$";
      i = dollar + 1;
      continue;
    }
    const close = text.indexOf("}", dollar + 2);
    if (close === -1) {
      problems.push({ index: dollar, message: 'unclosed "${": write ${NAME} or ${NAME:-default} (or $${ for a literal "${")' });
      out += text.slice(dollar);
      break;
    }
    const inner = text.slice(dollar + 2, close);
    const separator = inner.indexOf(":-");
    const name = separator === -1 ? inner : inner.slice(0, separator);
    const fallback = separator === -1 ? undefined : inner.slice(separator + 2);
    if (!NAME.test(name)) {
      problems.push({ index: dollar, message: `"\${${inner}}" is not a variable reference: write \${NAME} or \${NAME:-default} (or $\${ for a literal "\${")` });
    } else {
      const value = env[name];
      if (fallback !== undefined && (value === undefined || value === "")) out += fallback;
      else if (value !== undefined) out += value;
      else problems.push({ index: dollar, message: `environment variable ${name} is not set (set it, or write \${${name}:-default})` });
    }
    i = close + 1;
  }
  return { value: out, problems };
}
