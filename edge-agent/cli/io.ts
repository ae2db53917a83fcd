/** Where a command writes and what environment it reads: the process's, or a test's. */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}
