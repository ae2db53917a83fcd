/**
 * The former name of bench/profile.mjs's CLI, kept so the commands in notes still work:
 *   node bench/profile-top.mjs <file.cpuprofile | file.heapprofile | dir> [--top=25] [--by=module|function|both]
 */
import { main } from './profile.mjs';

main();
