#!/usr/bin/env node
// A real SMTP server process for e2e tests (the smtp-server package): listens on 127.0.0.1 on a
// free port, prints `listening <port>` once, then one JSON line per message received
// ({from, to, raw}). Stops on SIGTERM.
import { SMTPServer } from "smtp-server";

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, session, callback) {
    const chunks = [];
    stream.on("data", (chunk) => chunks.push(chunk));
    stream.on("end", () => {
      const message = {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
        to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        raw: Buffer.concat(chunks).toString("utf8"),
      };
      process.stdout.write(`${JSON.stringify(message)}\n`);
      callback();
    });
  },
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
