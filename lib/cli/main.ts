// `npm run tollgate -- <command>`: Tollgate's command line. Bad arguments print a clear
// message and exit non-zero; secrets are printed once, alone on the last stdout line.
import { CliError, runCommand } from "@/lib/cli/commands/run-command";

runCommand(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`tollgate: ${error.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`tollgate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
