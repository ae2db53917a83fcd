/** The exit codes of every `svc` command and service process, in one place (README: "Exit codes"). */

/** Done, or stopped cleanly by a signal. */
export const EXIT_OK = 0;
/** A config or start-up error, a crash, or a stop that failed or was forced by a second signal. */
export const EXIT_ERROR = 1;
/** The command line itself was wrong (unknown command or option, bad value). */
export const EXIT_USAGE = 2;
