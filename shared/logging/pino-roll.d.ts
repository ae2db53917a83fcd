/**
 * Types for pino-roll 4, which ships none. Only the in-process factory that the logger uses is
 * described: it resolves to the SonicBoom stream that writes the current file.
 */
declare module 'pino-roll' {
  import type { SonicBoom, SonicBoomOpts } from 'sonic-boom';

  namespace pinoRoll {
    interface LimitOptions {
      /** Files kept in addition to the current one. */
      count: number;
      /** Also remove older files of the same name pattern that an earlier process created. */
      removeOtherLogFiles?: boolean;
    }

    type Options = Omit<SonicBoomOpts, 'dest' | 'fd'> & {
      /** Base path; pino-roll appends `.<date>.<number><extension>`. */
      file: string | (() => string);
      size?: string | number;
      frequency?: 'daily' | 'hourly' | number;
      /**
       * Ignored by pino-roll 4.0.0 (it takes the extension from `file`, falling back to `.log`); kept
       * for forward compatibility.
       */
      extension?: string;
      symlink?: boolean;
      limit?: LimitOptions;
      /** date-fns format of the date part of the file name; without it the name has no date. */
      dateFormat?: string;
    };
  }

  function pinoRoll(options: pinoRoll.Options): Promise<SonicBoom>;

  export = pinoRoll;
}
