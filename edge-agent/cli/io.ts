/** Where a command writes and what environment it reads: the process's, or a test's. */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** The running process's streams and environment: what `svc` itself uses. */
export const PROCESS_IO: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};
