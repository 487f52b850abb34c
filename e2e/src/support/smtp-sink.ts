/**
 * @module support/smtp-sink
 * Runs bin/smtp-sink.mjs, a real SMTP server in its own process, and collects the messages it
 * prints, so a test sees exactly what the server under test sent by mail.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { e2eRoot } from "./paths.js";

export interface SmtpMessage {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  port: number;
  messages: SmtpMessage[];
  stop(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const child: ChildProcess = spawn(process.execPath, [join(e2eRoot, "bin", "smtp-sink.mjs")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const messages: SmtpMessage[] = [];
  let buffer = "";
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("smtp sink did not start within 10 s")), 10_000);
    child.once("exit", (code) => reject(new Error(`smtp sink exited with ${code}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      let cut = buffer.indexOf("\n");
      while (cut >= 0) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 1);
        const listening = /^listening (\d+)$/.exec(line);
        if (listening?.[1]) {
          clearTimeout(timer);
          resolve(Number(listening[1]));
        } else if (line.startsWith("{")) {
          messages.push(JSON.parse(line) as SmtpMessage);
        }
        cut = buffer.indexOf("\n");
      }
    });
  });
  return {
    port,
    messages,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
