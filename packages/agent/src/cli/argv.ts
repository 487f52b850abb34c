/**
 * @module cli/argv
 * A small argv parser: `<command> [--flag value | --flag=value]...`. Each command declares the
 * flags it takes, so a typo or a flag of another command is a usage error rather than ignored.
 */

export const COMMANDS = ["enroll", "announce", "run", "status", "restore-helper", "help", "version"] as const;
export type CommandName = (typeof COMMANDS)[number];

export interface Flags {
  server?: string;
  token?: string;
  configDir?: string;
  stateDir?: string;
  tlsPin?: string;
  socket?: string;
  /** `--label k=v`, repeatable: the host's labels, sent with the enrolment or announce. */
  labels?: string[];
}
type FlagName = keyof Flags;

const FLAG_NAMES: Record<string, FlagName> = {
  "--server": "server",
  "--token": "token",
  "--config-dir": "configDir",
  "--state-dir": "stateDir",
  "--tls-pin": "tlsPin",
  "--socket": "socket",
  "--label": "labels",
};

const ALLOWED: Record<CommandName, readonly FlagName[]> = {
  enroll: ["server", "token", "configDir", "stateDir", "tlsPin", "labels"],
  announce: ["server", "configDir", "stateDir", "tlsPin", "labels"],
  run: ["configDir", "stateDir"],
  status: ["configDir", "stateDir"],
  "restore-helper": ["configDir", "stateDir", "socket"],
  help: [],
  version: [],
};

const REQUIRED: Partial<Record<CommandName, readonly FlagName[]>> = {
  // The token may come from FLEETBACK_ENROLL_TOKEN instead (the installer keeps it out of argv).
  enroll: ["server"],
  announce: ["server"],
};

export type ParsedArgs = { ok: true; command: CommandName; flags: Flags } | { ok: false; message: string };

function isCommand(word: string): word is CommandName {
  return (COMMANDS as readonly string[]).includes(word);
}

function spelling(name: FlagName): string {
  return `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

export function parseArgv(argv: readonly string[]): ParsedArgs {
  if (argv.includes("--help") || argv.includes("-h")) {
    return { ok: true, command: "help", flags: {} };
  }
  if (argv.includes("--version")) {
    return { ok: true, command: "version", flags: {} };
  }
  const [word, ...rest] = argv;
  if (word === undefined) {
    return { ok: true, command: "help", flags: {} };
  }
  if (!isCommand(word)) {
    return { ok: false, message: `unknown command ${JSON.stringify(word)}` };
  }
  const flags: Flags = {};
  for (let index = 0; index < rest.length; index += 1) {
    const token = rest[index] ?? "";
    const equals = token.indexOf("=");
    const flag = equals === -1 ? token : token.slice(0, equals);
    const name = FLAG_NAMES[flag];
    if (name === undefined) {
      return { ok: false, message: `unknown option ${JSON.stringify(flag)} for ${word}` };
    }
    if (!ALLOWED[word].includes(name)) {
      return { ok: false, message: `${word} does not take ${flag}` };
    }
    let value: string | undefined;
    if (equals === -1) {
      index += 1;
      value = rest[index];
    } else {
      value = token.slice(equals + 1);
    }
    if (value === undefined || value === "" || (equals === -1 && value.startsWith("--"))) {
      return { ok: false, message: `${flag} needs a value` };
    }
    if (name === "labels") {
      flags.labels = [...(flags.labels ?? []), value];
      continue;
    }
    if (flags[name] !== undefined) {
      return { ok: false, message: `${flag} given twice` };
    }
    flags[name] = value;
  }
  for (const name of REQUIRED[word] ?? []) {
    if (flags[name] === undefined) {
      return { ok: false, message: `${word} needs ${spelling(name)}` };
    }
  }
  return { ok: true, command: word, flags };
}
